//! LIST of a collection.

use axum::response::Response;

use super::{Ctx, respond};
use crate::api_error::ApiResult;

/// Handles GET `.../<resource>` without `watch`.
pub async fn handle(ctx: &Ctx<'_>) -> ApiResult<Response> {
    let page = ctx
        .app
        .registry
        .list(ctx.scope(), ctx.query.list_options()?)
        .await?;
    respond::list(ctx, &page)
}
