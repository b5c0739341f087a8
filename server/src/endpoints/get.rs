//! GET of one object (or its `/status`).

use axum::response::Response;

use super::{Ctx, respond};
use crate::api_error::ApiResult;

/// Handles GET `.../<resource>/<name>`.
pub async fn handle(ctx: &Ctx<'_>) -> ApiResult<Response> {
    let object = ctx
        .app
        .registry
        .get_shared(ctx.read_scope(), ctx.name())
        .await?;
    let mut response = respond::shared(ctx, &object)?;
    let rest = ctx.app.registry.hooks().rest(ctx.entry.info);
    if let Some(warning) = rest.and_then(|rest| rest.read_warning()) {
        respond::warn(&mut response, warning);
    }
    Ok(response)
}
