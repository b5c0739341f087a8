//! PATCH: JSON patch, merge patch and strategic merge patch; server-side apply
//! is answered 415 until it exists.

use axum::http::{StatusCode, header};
use axum::response::Response;
use bytes::Bytes;

use super::{Ctx, respond};
use crate::api_error::{ApiError, ApiResult};
use crate::negotiation::decode_patch;
use crate::registry::PatchKind;

/// Handles PATCH `.../<resource>/<name>[/<subresource>]`.
pub async fn handle(ctx: &Ctx<'_>, body: Bytes) -> ApiResult<Response> {
    let kind = patch_kind(ctx)?;
    let patch = decode_patch(&body)?;
    let written = ctx
        .app
        .registry
        .patch(
            ctx.scope(),
            ctx.name(),
            kind,
            &patch,
            ctx.endpoint(),
            ctx.write_options()?,
        )
        .await?;
    respond::object(ctx, StatusCode::OK, &written.object, &written.warnings)
}

/// The patch format the request's Content-Type names.
pub fn patch_kind(ctx: &Ctx<'_>) -> ApiResult<PatchKind> {
    let content_type = ctx
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let mime = content_type.split(';').next().unwrap_or_default().trim();
    match mime {
        "application/json-patch+json" => Ok(PatchKind::Json),
        "application/merge-patch+json" => Ok(PatchKind::Merge),
        // A custom resource has no Go struct to say how its lists merge.
        "application/strategic-merge-patch+json" if ctx.entry.is_custom() => {
            Err(ApiError::unsupported_media_type(
                "the body of the request was in an unknown format - accepted media types include: \
                 application/json-patch+json, application/merge-patch+json, \
                 application/apply-patch+yaml",
            ))
        }
        "application/strategic-merge-patch+json" => Ok(PatchKind::Strategic),
        "application/apply-patch+yaml" | "application/apply-patch+cbor" => {
            Err(ApiError::unsupported_media_type(format!(
                "the patch type {mime:?} is not supported yet by this server; use a JSON patch \
                 (kubectl patch --type=json), a merge patch (--type=merge) or a strategic \
                 merge patch (--type=strategic)"
            )))
        }
        other => Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format ({other}) - accepted media types include: \
                 application/json-patch+json, application/merge-patch+json, \
                 application/strategic-merge-patch+json"
        ))),
    }
}
