//! LIST of a collection.

use axum::response::Response;

use super::{Ctx, respond};
use crate::api_error::ApiResult;

/// Handles GET `.../<resource>` without `watch`.
pub async fn handle(ctx: &Ctx<'_>) -> ApiResult<Response> {
    let options = ctx.query.checked_list_options(false)?;
    let page = ctx.app.registry.list(ctx.read_scope(), options).await?;
    let mut response = respond::list(ctx, page)?;
    let rest = ctx.app.registry.hooks().rest(ctx.entry.info);
    if let Some(warning) = rest.and_then(|rest| rest.read_warning()) {
        respond::warn(&mut response, warning);
    }
    Ok(response)
}
