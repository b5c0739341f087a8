//! GET of one object (or its `/status`).

use axum::http::StatusCode;
use axum::response::Response;

use super::{Ctx, respond};
use crate::api_error::ApiResult;
use crate::registry::{COMPONENT_STATUS_DEPRECATED, is_component_status};

/// Handles GET `.../<resource>/<name>`.
pub async fn handle(ctx: &Ctx<'_>) -> ApiResult<Response> {
    let object = ctx.app.registry.get(ctx.read_scope(), ctx.name()).await?;
    let mut response = respond::object(ctx, StatusCode::OK, &object, &[])?;
    if is_component_status(ctx.scope()) {
        respond::warn(&mut response, COMPONENT_STATUS_DEPRECATED);
    }
    Ok(response)
}
