//! GET of one object (or its `/status`).

use axum::http::StatusCode;
use axum::response::Response;

use super::{Ctx, respond};
use crate::api_error::ApiResult;

/// Handles GET `.../<resource>/<name>`.
pub async fn handle(ctx: &Ctx<'_>) -> ApiResult<Response> {
    let object = ctx.app.registry.get(ctx.scope(), ctx.name()).await?;
    respond::object(ctx, StatusCode::OK, &object, &[])
}
