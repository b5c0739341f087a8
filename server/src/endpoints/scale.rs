//! `/scale` of a kind with a scale subresource: GET, PUT and PATCH of an
//! autoscaling/v1 Scale, in JSON, YAML or protobuf.

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use kapi_runtime::proto::envelope;
use serde_json::Value;

use super::{Ctx, respond};
use crate::api_error::{ApiError, ApiResult};
use crate::negotiation::{self, Format};
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
            let patch = negotiation::decode_json(&body)?;
            let answer = registry
                .patch_scale(ctx.scope(), ctx.name(), kind, &patch, ctx.write_options()?)
                .await?;
            (answer.scale, answer.warnings)
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    match ctx.output.format {
        Format::Protobuf => {
            let entry = registry.scale_body()?;
            let raw = (entry.encode_proto)(scale).map_err(ApiError::internal)?;
            let bytes = envelope::encode(&entry.api_version(), entry.kind, &raw);
            Ok(respond::protobuf(StatusCode::OK, bytes, &warnings))
        }
        _ => respond::body(ctx, StatusCode::OK, &scale, &warnings),
    }
}

/// A Scale body in JSON, YAML or protobuf, as JSON.
fn decode(ctx: &Ctx<'_>, body: &[u8]) -> ApiResult<Value> {
    match negotiation::body_format(ctx.headers)? {
        Format::Protobuf => {
            let entry = ctx.app.registry.scale_body()?;
            let unknown = envelope::decode(body)
                .map_err(|e| ApiError::bad_request(format!("invalid protobuf body: {e}")))?;
            (entry.decode_proto)(unknown.raw)
                .map_err(|e| ApiError::bad_request(format!("invalid Scale: {e}")))
        }
        Format::Json => negotiation::decode_json(body),
        Format::Yaml => negotiation::decode_yaml(body),
    }
}
