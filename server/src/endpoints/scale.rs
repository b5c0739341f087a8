//! `/scale` of a kind with a scale subresource: GET, PUT and PATCH of an
//! autoscaling/v1 Scale, in JSON, YAML or protobuf.

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use serde_json::Value;

use super::{Ctx, respond};
use crate::api_error::{ApiError, ApiResult};
use crate::negotiation;
use crate::request_info::Verb;

/// Handles a request for `.../<resource>/<name>/scale`.
pub async fn handle(ctx: &Ctx<'_>, body: Bytes) -> ApiResult<Response> {
    let registry = &ctx.app.registry;
    let (scale, warnings) = match ctx.req.verb {
        Verb::Get => (
            registry.get_scale(ctx.scope(), ctx.name()).await?,
            Vec::new(),
        ),
        Verb::Update => {
            let answer = registry
                .update_scale(
                    ctx.scope(),
                    ctx.name(),
                    decode(ctx, &body)?,
                    ctx.write_options()?,
                )
                .await?;
            (answer.scale, answer.warnings)
        }
        Verb::Patch => {
            let kind = super::patch::patch_kind(ctx)?;
            let patch = negotiation::decode_patch(&body)?;
            let answer = registry
                .patch_scale(ctx.scope(), ctx.name(), kind, &patch, ctx.write_options()?)
                .await?;
            (answer.scale, answer.warnings)
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    respond::body_of(
        ctx,
        &registry.scale_body()?,
        StatusCode::OK,
        scale,
        &warnings,
    )
}

/// A Scale body in JSON, YAML or protobuf, as JSON.
fn decode(ctx: &Ctx<'_>, body: &[u8]) -> ApiResult<Value> {
    super::decode_body(ctx, &ctx.app.registry.scale_body()?, body)
}
