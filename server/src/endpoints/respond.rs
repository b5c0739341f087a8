//! Building responses: the negotiated shape (object, Table, PartialObjectMetadata)
//! and format, the HTTP code, and `Warning` headers.

use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kapi_runtime::ResourceInfo;
use kapi_runtime::meta::{ListMeta, Status};
use kapi_runtime::proto::envelope;
use serde_json::{Value, json};

use super::{Ctx, list_body};
use crate::api_error::{ApiError, ApiResult};
use crate::cache::{Cached, ObjectRef};
use crate::negotiation::{Format, Shape, encode};
use crate::protobuf;
use crate::registry::{ListPage, Object};
use crate::table::{IncludeObject, partial_metadata, table};

/// Serializes `value` with the negotiated format (JSON or YAML), code and warnings.
pub fn body<T: serde::Serialize>(
    ctx: &Ctx<'_>,
    code: StatusCode,
    value: &T,
    warnings: &[String],
) -> ApiResult<Response> {
    let (bytes, content_type) = encode(value, ctx.output.format)?;
    Ok(with_headers(code, bytes, content_type, warnings))
}

/// A body of a kind that is no resource (a Scale, a TokenRequest), given as
/// its JSON, in the format the client asked for.
pub fn body_of(
    ctx: &Ctx<'_>,
    entry: &kapi_runtime::scheme::BodyEntry,
    code: StatusCode,
    value: serde_json::Value,
    warnings: &[String],
) -> ApiResult<Response> {
    match ctx.output.format {
        Format::Protobuf => {
            let raw = (entry.encode_proto)(value).map_err(crate::api_error::ApiError::internal)?;
            let bytes = envelope::encode(&entry.api_version(), entry.kind, &raw);
            Ok(protobuf(code, bytes, warnings))
        }
        _ => body(ctx, code, &value, warnings),
    }
}

/// A response already encoded as protobuf.
pub fn protobuf(code: StatusCode, bytes: Vec<u8>, warnings: &[String]) -> Response {
    with_headers(code, bytes, envelope::MEDIA_TYPE, warnings)
}

/// A Status body (e.g. the answer to a delete) in the negotiated format.
pub fn status(ctx: &Ctx<'_>, code: StatusCode, status: &Status) -> ApiResult<Response> {
    match ctx.output.format {
        Format::Protobuf => Ok(protobuf(code, protobuf::encode_status(status), &[])),
        _ => body(ctx, code, status, &[]),
    }
}

fn with_headers(
    code: StatusCode,
    bytes: Vec<u8>,
    content_type: &'static str,
    warnings: &[String],
) -> Response {
    let mut response = (code, bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    for warning in warnings {
        warn(&mut response, warning);
    }
    response
}

/// Adds a `Warning` header (`299 - "text"`, as kube-apiserver writes them).
pub fn warn(response: &mut Response, warning: &str) {
    if let Some(value) = crate::api_error::warning_header(warning) {
        response.headers_mut().append("warning", value);
    }
}

/// A read object in the shape the client asked for (200), its JSON or
/// protobuf message written once (the watch cache keeps them).
pub fn shared(ctx: &Ctx<'_>, object: &Cached) -> ApiResult<Response> {
    cached(ctx, StatusCode::OK, object, &[])
}

/// An object the store shares (read from the watch cache, or just written
/// and handed to it) in the shape the client asked for: its JSON or
/// protobuf message is written once, for this answer and the cache alike.
pub fn cached(
    ctx: &Ctx<'_>,
    code: StatusCode,
    object: &Cached,
    warnings: &[String],
) -> ApiResult<Response> {
    match (ctx.output.shape, ctx.output.format) {
        (Shape::Object, Format::Protobuf) => Ok(protobuf(
            code,
            protobuf::encode_cached(ctx.entry, object)?,
            warnings,
        )),
        (Shape::Object, Format::Json) => {
            let json = object.json().map_err(ApiError::internal)?;
            let mut body = Vec::with_capacity(json.len() + 1);
            body.extend_from_slice(json);
            body.push(b'\n');
            Ok(with_headers(code, body, "application/json", warnings))
        }
        _ => {
            let object = object.object().map_err(ApiError::internal)?;
            self::object(ctx, code, &object, warnings)
        }
    }
}

/// One object in the shape the client asked for.
pub fn object(
    ctx: &Ctx<'_>,
    code: StatusCode,
    object: &Object,
    warnings: &[String],
) -> ApiResult<Response> {
    match (ctx.output.shape, ctx.output.format) {
        (Shape::Object, Format::Protobuf) => Ok(protobuf(
            code,
            protobuf::encode_object(ctx.entry, object)?,
            warnings,
        )),
        (Shape::PartialMetadata, Format::Protobuf) => {
            Ok(protobuf(code, protobuf::encode_partial(object), warnings))
        }
        (Shape::Object, Format::Json) => {
            let mut json = object.to_json().map_err(ApiError::internal)?;
            json.push(b'\n');
            Ok(with_headers(code, json, "application/json", warnings))
        }
        (Shape::Object, _) => body(ctx, code, object, warnings),
        (Shape::PartialMetadata, _) => body(ctx, code, &partial_metadata(object), warnings),
        (Shape::Table, _) => {
            let include = IncludeObject::parse(ctx.query.include_object.as_deref())
                .map_err(ApiError::bad_request)?;
            let meta = ListMeta {
                resource_version: object.metadata().resource_version.clone(),
                ..ListMeta::default()
            };
            body(
                ctx,
                code,
                &table(ctx.entry, &[object], meta, include, false),
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

/// A `<Kind>List` as JSON around its items: head and tail.
fn json_list(info: &ResourceInfo, meta: &ListMeta) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut head = Vec::with_capacity(256);
    head.extend_from_slice(b"{\"kind\":");
    serde_json::to_writer(&mut head, &info.list_kind()).map_err(|e| e.to_string())?;
    head.extend_from_slice(b",\"apiVersion\":");
    serde_json::to_writer(&mut head, info.api_version()).map_err(|e| e.to_string())?;
    head.extend_from_slice(b",\"metadata\":");
    serde_json::to_writer(&mut head, meta).map_err(|e| e.to_string())?;
    head.extend_from_slice(b",\"items\":[");
    Ok((head, b"]}\n".to_vec()))
}

/// A custom resource's list as JSON around its items, as upstream writes an
/// unstructured list: keys sorted, and `continue` present even when empty.
fn custom_json_list(info: &ResourceInfo, meta: &ListMeta) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut head = Vec::with_capacity(64);
    head.extend_from_slice(b"{\"apiVersion\":");
    serde_json::to_writer(&mut head, info.api_version()).map_err(|e| e.to_string())?;
    head.extend_from_slice(b",\"items\":[");
    let mut tail = Vec::with_capacity(256);
    tail.extend_from_slice(b"],\"kind\":");
    serde_json::to_writer(&mut tail, &info.list_kind()).map_err(|e| e.to_string())?;
    tail.extend_from_slice(b",\"metadata\":{\"continue\":");
    serde_json::to_writer(&mut tail, meta.continue_.as_deref().unwrap_or_default())
        .map_err(|e| e.to_string())?;
    if let Some(remaining) = meta.remaining_item_count {
        tail.extend_from_slice(format!(",\"remainingItemCount\":{remaining}").as_bytes());
    }
    if let Some(rv) = &meta.resource_version {
        tail.extend_from_slice(b",\"resourceVersion\":");
        serde_json::to_writer(&mut tail, rv).map_err(|e| e.to_string())?;
    }
    tail.extend_from_slice(b"}}\n");
    Ok((head, tail))
}

/// A list in the shape the client asked for.
pub fn list(ctx: &Ctx<'_>, page: ListPage) -> ApiResult<Response> {
    let meta = ListMeta {
        // A kind read without storage (ComponentStatus) has no revision.
        resource_version: (page.revision != 0).then(|| page.revision.to_string()),
        continue_: page.continue_token.clone(),
        remaining_item_count: page.remaining,
        ..ListMeta::default()
    };
    items(ctx, &meta, page.items)
}

/// Cached objects decoded, for the shapes that are not their encodings.
fn decoded(items: &[Arc<Cached>]) -> ApiResult<Vec<ObjectRef<'_>>> {
    let decode = |item| Cached::object(item).map_err(ApiError::internal);
    items.iter().map(|item| decode(&**item)).collect()
}

fn refs<'a>(decoded: &'a [ObjectRef<'_>]) -> Vec<&'a Object> {
    decoded.iter().map(|object| &**object).collect()
}

/// Objects as a list (`<Kind>List`, metadata-only list or Table) with `meta`.
pub fn items(ctx: &Ctx<'_>, meta: &ListMeta, items: Vec<Arc<Cached>>) -> ApiResult<Response> {
    match (ctx.output.shape, ctx.output.format) {
        (Shape::Object, Format::Protobuf) => {
            let (head, messages, tail) = protobuf::list_parts(ctx.entry, meta, &items)?;
            let items = list_body::Items::Protobuf(messages.into_iter());
            list_body::response(ctx.headers, envelope::MEDIA_TYPE, head, items, tail)
                .map_err(ApiError::internal)
        }
        (Shape::PartialMetadata, Format::Protobuf) => {
            let bytes = protobuf::encode_partial_list(meta, &refs(&decoded(&items)?));
            Ok(protobuf(StatusCode::OK, bytes, &[]))
        }
        (Shape::Object, Format::Json) => {
            let (head, tail) = if ctx.entry.is_custom() {
                custom_json_list(ctx.entry.info, meta)
            } else {
                json_list(ctx.entry.info, meta)
            }
            .map_err(ApiError::internal)?;
            let items = list_body::Items::Json {
                items: items.into_iter(),
                typed: !ctx.entry.is_custom(),
            };
            list_body::response(ctx.headers, "application/json", head, items, tail)
                .map_err(ApiError::internal)
        }
        (Shape::Object, _) => {
            let (kind, api_version) = (ctx.entry.info.list_kind(), ctx.entry.info.api_version());
            let decoded = decoded(&items)?;
            // A built-in kind's items without their kind and apiVersion, as
            // the JSON list writes them.
            let typed = !ctx.entry.is_custom();
            let values = refs(&decoded)
                .into_iter()
                .map(|object| {
                    let mut value = object.to_value().map_err(ApiError::internal)?;
                    if typed && let Value::Object(fields) = &mut value {
                        fields.remove("kind");
                        fields.remove("apiVersion");
                    }
                    Ok(value)
                })
                .collect::<ApiResult<Vec<Value>>>()?;
            let list = ListBody {
                kind: &kind,
                api_version,
                metadata: meta,
                items: &values,
            };
            body(ctx, StatusCode::OK, &list, &[])
        }
        (Shape::PartialMetadata, _) => {
            let partial: Vec<Value> = refs(&decoded(&items)?)
                .into_iter()
                .map(partial_metadata)
                .collect();
            let list = json!({
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
                "items": partial,
            });
            body(ctx, StatusCode::OK, &list, &[])
        }
        (Shape::Table, _) => {
            let include = IncludeObject::parse(ctx.query.include_object.as_deref())
                .map_err(ApiError::bad_request)?;
            body(
                ctx,
                StatusCode::OK,
                &table(
                    ctx.entry,
                    &refs(&decoded(&items)?),
                    meta.clone(),
                    include,
                    false,
                ),
                &[],
            )
        }
    }
}
