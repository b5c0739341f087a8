//! LIST of a collection.

use axum::response::Response;

use super::{Ctx, respond};
use crate::api_error::ApiResult;
use crate::registry::{COMPONENT_STATUS_DEPRECATED, is_component_status};

/// Handles GET `.../<resource>` without `watch`.
pub async fn handle(ctx: &Ctx<'_>) -> ApiResult<Response> {
    let options = ctx.query.checked_list_options(false)?;
    let page = ctx.app.registry.list(ctx.read_scope(), options).await?;
    let mut response = respond::list(ctx, &page)?;
    if is_component_status(ctx.scope()) {
        respond::warn(&mut response, COMPONENT_STATUS_DEPRECATED);
    }
    Ok(response)
}
