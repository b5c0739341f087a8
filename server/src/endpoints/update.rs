//! UPDATE (PUT of a whole object, or of its `/status`).

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;

use super::{Ctx, respond};
use crate::api_error::ApiResult;

/// Handles PUT `.../<resource>/<name>[/<subresource>]`.
pub async fn handle(ctx: &Ctx<'_>, body: Bytes) -> ApiResult<Response> {
    ctx.check_field_manager("UpdateOptions", None)?;
    let value = super::decode_object(ctx, &body)?;
    let written = ctx
        .app
        .registry
        .update(
            ctx.scope(),
            ctx.name(),
            value,
            ctx.endpoint(),
            ctx.write_options()?,
        )
        .await?;
    respond::cached(ctx, StatusCode::OK, &written.object, &written.warnings)
}
