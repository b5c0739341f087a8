//! CREATE (POST to a collection): 201 with the stored object.

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;

use super::{Ctx, respond};

use crate::api_error::ApiResult;
use crate::registry::is_binding;

/// Handles POST `.../<resource>`.
pub async fn handle(ctx: &Ctx<'_>, body: Bytes) -> ApiResult<Response> {
    if is_binding(ctx.scope()) {
        return super::action::bind(ctx, body, None).await;
    }
    let value = super::decode_object(ctx, &body)?;
    let written = ctx
        .app
        .registry
        .create(ctx.scope(), value, ctx.write_options()?)
        .await?;
    respond::object(ctx, StatusCode::CREATED, &written.object, &written.warnings)
}
