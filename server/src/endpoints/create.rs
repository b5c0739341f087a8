//! CREATE (POST to a collection): 201 with the stored object.

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;

use super::{Ctx, respond};

use crate::api_error::ApiResult;

/// Handles POST `.../<resource>`.
pub async fn handle(ctx: &Ctx<'_>, body: Bytes) -> ApiResult<Response> {
    // A resource whose creates are an action on another (`bindings`).
    if let Some(action) = ctx.app.registry.hooks().action(ctx.entry.info, "") {
        return super::action::create(ctx, action, body).await;
    }
    ctx.check_field_manager("CreateOptions", None)?;
    let value = super::decode_object(ctx, &body)?;
    let written = ctx
        .app
        .registry
        .create(ctx.scope(), value, ctx.write_options()?)
        .await?;
    respond::cached(ctx, StatusCode::CREATED, &written.object, &written.warnings)
}
