//! PATCH: JSON patch, merge patch, strategic merge patch and server-side
//! apply (a YAML or JSON configuration).

use axum::http::{StatusCode, header};
use axum::response::Response;
use bytes::Bytes;

use super::{Ctx, respond};
use crate::api_error::{ApiError, ApiResult};
use crate::negotiation::decode_patch;
use crate::registry::{FieldValidation, PatchKind};

/// Handles PATCH `.../<resource>/<name>[/<subresource>]`.
pub async fn handle(ctx: &Ctx<'_>, body: Bytes) -> ApiResult<Response> {
    let kind = patch_kind(ctx)?;
    ctx.check_field_manager(
        "PatchOptions",
        Some(matches!(kind, PatchKind::Apply { .. })),
    )?;
    let options = ctx.write_options()?;
    let mut warnings = Vec::new();
    let patch = match kind {
        PatchKind::Apply { .. } => {
            let patch = decode_apply(&body)?;
            // Keys repeated in the configuration, as the strict YAML decoder
            // reports them.
            let text = std::str::from_utf8(&body).unwrap_or_default();
            let repeated = crate::body::duplicates::yaml_duplicate_keys(text);
            if !repeated.is_empty() {
                match options.field_validation {
                    FieldValidation::Strict => {
                        return Err(ApiError::bad_request(format!(
                            "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  {}",
                            repeated.join("\n  ")
                        )));
                    }
                    FieldValidation::Warn => warnings = repeated,
                    FieldValidation::Ignore => {}
                }
            }
            patch
        }
        _ => decode_patch(&body)?,
    };
    let mut written = ctx
        .app
        .registry
        .patch(
            ctx.scope(),
            ctx.name(),
            kind,
            &patch,
            ctx.endpoint(),
            options,
        )
        .await
        .map_err(|e| e.with_warnings(&warnings))?;
    warnings.append(&mut written.warnings);
    written.warnings = warnings;
    let status = if written.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    respond::cached(ctx, status, &written.object, &written.warnings)
}

/// An applied configuration: YAML (JSON is YAML) holding one object,
/// refused in the words of upstream's YAML-to-JSON decoding.
fn decode_apply(body: &Bytes) -> ApiResult<serde_json::Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    let value = crate::body::decode_yaml(body).map_err(|e| {
        let why = e.0.message.unwrap_or_default();
        let why = why
            .strip_prefix("error decoding YAML: ")
            .unwrap_or(&why)
            .to_owned();
        ApiError::bad_request(format!(
            "error decoding YAML: error converting YAML to JSON: yaml: {why}"
        ))
    })?;
    if !value.is_object() {
        return Err(ApiError::bad_request(format!(
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            crate::strategic_merge::json_kind(&value)
        )));
    }
    Ok(value)
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
        "application/apply-patch+yaml" => Ok(PatchKind::Apply {
            force: ctx.query.force(),
        }),
        // CBOR (behind a feature gate 1.32 leaves off) included.
        // A media type no patch route takes: the router's bare 415.
        _ => Err(ApiError::unsupported_media_type_bare()),
    }
}
