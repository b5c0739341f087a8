//! Building responses: the negotiated shape (object, Table, PartialObjectMetadata)
//! and format, the HTTP code, and `Warning` headers.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kapi_runtime::meta::ListMeta;
use serde_json::{Value, json};

use super::Ctx;
use crate::api_error::{ApiError, ApiResult};
use crate::negotiation::{Shape, encode};
use crate::registry::{ListPage, Object};
use crate::table::{IncludeObject, partial_metadata, table};

/// Serializes `value` with the negotiated format, code and warnings.
pub fn body<T: serde::Serialize>(
    ctx: &Ctx<'_>,
    code: StatusCode,
    value: &T,
    warnings: &[String],
) -> ApiResult<Response> {
    let (bytes, content_type) = encode(value, ctx.output.format)?;
    let mut response = (code, bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    for warning in warnings {
        let text = format!("299 - {}", serde_json::Value::String(warning.clone()));
        if let Ok(value) = HeaderValue::from_str(&text) {
            headers.append("warning", value);
        }
    }
    Ok(response)
}

/// One object in the shape the client asked for.
pub fn object(
    ctx: &Ctx<'_>,
    code: StatusCode,
    object: &Object,
    warnings: &[String],
) -> ApiResult<Response> {
    match ctx.output.shape {
        Shape::Object => body(ctx, code, object, warnings),
        Shape::PartialMetadata => body(ctx, code, &partial_metadata(object), warnings),
        Shape::Table => {
            let include = IncludeObject::parse(ctx.query.include_object.as_deref())
                .map_err(ApiError::bad_request)?;
            let meta = ListMeta {
                resource_version: object.metadata.resource_version.clone(),
                ..ListMeta::default()
            };
            body(
                ctx,
                code,
                &table(
                    ctx.entry,
                    std::slice::from_ref(object),
                    meta,
                    include,
                    false,
                ),
                warnings,
            )
        }
    }
}

/// A list (`<Kind>List`) serialized straight from its items, without an
/// intermediate JSON tree.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListBody<'a, T: serde::Serialize> {
    /// `ConfigMapList`, ...
    pub kind: &'a str,
    /// The group version.
    pub api_version: &'a str,
    /// resourceVersion, continue, remainingItemCount.
    pub metadata: &'a ListMeta,
    /// The objects.
    pub items: &'a [T],
}

/// A list in the shape the client asked for.
pub fn list(ctx: &Ctx<'_>, page: &ListPage) -> ApiResult<Response> {
    let meta = ListMeta {
        resource_version: Some(page.revision.to_string()),
        continue_: page.continue_token.clone(),
        remaining_item_count: page.remaining,
        ..ListMeta::default()
    };
    match ctx.output.shape {
        Shape::Object => {
            let (kind, api_version) = (ctx.entry.info.list_kind(), ctx.entry.info.api_version());
            let list = ListBody {
                kind: &kind,
                api_version: &api_version,
                metadata: &meta,
                items: &page.items,
            };
            body(ctx, StatusCode::OK, &list, &[])
        }
        Shape::PartialMetadata => {
            let items: Vec<Value> = page.items.iter().map(partial_metadata).collect();
            let list = json!({
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
                "items": items,
            });
            body(ctx, StatusCode::OK, &list, &[])
        }
        Shape::Table => {
            let include = IncludeObject::parse(ctx.query.include_object.as_deref())
                .map_err(ApiError::bad_request)?;
            body(
                ctx,
                StatusCode::OK,
                &table(ctx.entry, &page.items, meta, include, false),
                &[],
            )
        }
    }
}
