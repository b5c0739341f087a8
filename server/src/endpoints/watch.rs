//! WATCH: a chunked stream of newline-delimited `{"type":...,"object":...}` frames,
//! objects in the negotiated shape (kubectl `get -w` asks for Table rows).

use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use kapi_runtime::meta::{ListMeta, ObjectMeta};
use serde_json::{Value, json};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;

use super::Ctx;
use crate::api_error::{ApiError, ApiResult};
use crate::cache::Cached;
use crate::negotiation::{Format, Shape};
use crate::protobuf;
use crate::registry::{Object, WatchOptions, WatchStart};
use crate::table::{IncludeObject, partial_metadata, table};

/// Watches end after this long unless `timeoutSeconds` says otherwise
/// (kube-apiserver picks 30-60 minutes).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How one frame's object is rendered.
#[derive(Clone)]
struct Render {
    format: Format,
    shape: Shape,
    include: IncludeObject,
    entry: kapi_runtime::scheme::KindEntry,
}

/// Handles GET `.../<resource>?watch=true`.
pub async fn handle(ctx: &Ctx<'_>) -> ApiResult<Response> {
    let opts = WatchOptions {
        list: ctx.query.checked_list_options(true)?,
        send_initial_events: ctx.query.send_initial_events()?,
        allow_bookmarks: ctx.query.allow_bookmarks()?,
        timeout: ctx.query.timeout()?.unwrap_or(DEFAULT_TIMEOUT),
    };
    let include =
        IncludeObject::parse(ctx.query.include_object.as_deref()).map_err(ApiError::bad_request)?;
    let render = Render {
        format: ctx.output.format,
        shape: ctx.output.shape,
        include,
        entry: ctx.entry.clone(),
    };
    let frames = ctx
        .app
        .registry
        .watch(ctx.scope(), opts, ctx.app.shutdown.clone())
        .await?;
    let format = render.format;
    let stream = ReceiverStream::new(frames)
        .map(move |frame| Ok::<_, std::convert::Infallible>(encode(&render, frame)));
    let mut response = (StatusCode::OK, Body::from_stream(stream)).into_response();
    let content_type = match format {
        Format::Protobuf => "application/vnd.kubernetes.protobuf;stream=watch",
        _ => "application/json",
    };
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    Ok(response)
}

/// One `{"type": ..., "object": ...}` frame, serialized straight from the object.
#[derive(serde::Serialize)]
struct Frame<'a, T: serde::Serialize> {
    #[serde(rename = "type")]
    type_: &'a str,
    object: &'a T,
}

fn encode(render: &Render, frame: WatchStart) -> Bytes {
    let protobuf = render.format == Format::Protobuf;
    let frame = match frame {
        // The watch cache's event as it is: its frame is made by the first
        // watcher that sends it and shared by all the others.
        WatchStart::Shared(event) if render.shape == Shape::Object => {
            return event.frame(protobuf, || {
                let frame = WatchStart::Event(event.type_.as_str(), event.object.clone());
                encode_owned(render, frame)
            });
        }
        WatchStart::Shared(event) => WatchStart::Event(event.type_.as_str(), event.object.clone()),
        frame => frame,
    };
    encode_owned(render, frame)
}

/// A frame for this watcher alone.
fn encode_owned(render: &Render, frame: WatchStart) -> Bytes {
    if render.format == Format::Protobuf {
        return encode_protobuf(render, frame);
    }
    let mut line = match frame {
        WatchStart::Event(kind, object) if render.shape == Shape::Object => {
            return object_line(kind, &object);
        }
        WatchStart::Shared(event) if render.shape == Shape::Object => {
            return object_line(event.type_.as_str(), &event.object);
        }
        WatchStart::Event(kind, object) => shaped_line(render, kind, &object),
        WatchStart::Shared(event) => shaped_line(render, event.type_.as_str(), &event.object),
        WatchStart::Bookmark {
            revision,
            initial_events_end,
        } => match bookmark(render, revision, initial_events_end) {
            Ok(object) => line("BOOKMARK", &object),
            Err(e) => line("ERROR", &e.0),
        },
        WatchStart::Error(status) => line("ERROR", &status),
    };
    line.push(b'\n');
    Bytes::from(line)
}

/// A length-prefixed protobuf frame; an object that cannot be encoded becomes
/// an ERROR frame rather than a silently missing event.
fn encode_protobuf(render: &Render, frame: WatchStart) -> Bytes {
    let entry = &render.entry;
    let encoded = match &frame {
        WatchStart::Event(kind, object) if render.shape != Shape::PartialMetadata => {
            return object_frame(entry, kind, object);
        }
        WatchStart::Shared(event) if render.shape != Shape::PartialMetadata => {
            return object_frame(entry, event.type_.as_str(), &event.object);
        }
        WatchStart::Event(_, object) => partial(object),
        WatchStart::Shared(event) => partial(&event.object),
        WatchStart::Bookmark {
            revision,
            initial_events_end,
        } => bookmark_meta(render, *revision, *initial_events_end).map(|meta| match render.shape {
            Shape::PartialMetadata => protobuf::encode_partial_bookmark(&meta),
            _ => protobuf::encode_bookmark(entry, &meta),
        }),
        WatchStart::Error(status) => Ok(protobuf::encode_status(status)),
    };
    let type_ = match &frame {
        WatchStart::Event(kind, _) => kind,
        WatchStart::Shared(event) => event.type_.as_str(),
        WatchStart::Bookmark { .. } => "BOOKMARK",
        WatchStart::Error(_) => "ERROR",
    };
    Bytes::from(match encoded {
        Ok(object) => protobuf::watch_frame(type_, &object),
        Err(e) => error_frame(&e),
    })
}

/// A cached object's protobuf frame, its message encoded once.
fn object_frame(entry: &kapi_runtime::scheme::KindEntry, type_: &str, object: &Cached) -> Bytes {
    protobuf::cached_watch_frame(entry, type_, object)
        .unwrap_or_else(|e| Bytes::from(error_frame(&e)))
}

/// A cached object as partial metadata.
fn partial(object: &Cached) -> ApiResult<Vec<u8>> {
    let object = object.object().map_err(ApiError::internal)?;
    Ok(protobuf::encode_partial(&object))
}

/// A JSON line of an object in the watcher's shape (a table row, partial
/// metadata); an ERROR line if it cannot be decoded.
fn shaped_line(render: &Render, type_: &str, object: &Cached) -> Vec<u8> {
    match object.object() {
        Ok(object) => line(type_, &shaped(render, &object)),
        Err(e) => line("ERROR", &ApiError::internal(e).0),
    }
}

fn error_frame(e: &ApiError) -> Vec<u8> {
    protobuf::watch_frame("ERROR", &protobuf::encode_status(&e.0))
}

/// `{"type":"ADDED","object":{...}}` and its newline, the object's JSON
/// written once.
fn object_line(type_: &str, object: &Cached) -> Bytes {
    let (head, tail) = crate::cache::json_frame_parts(type_);
    object.json_frame(&head, tail).unwrap_or_else(|e| {
        let mut line = line("ERROR", &ApiError::internal(e).0);
        line.push(b'\n');
        Bytes::from(line)
    })
}

fn line<T: serde::Serialize>(type_: &str, object: &T) -> Vec<u8> {
    serde_json::to_vec(&Frame { type_, object }).unwrap_or_default()
}

fn shaped(render: &Render, object: &Object) -> Value {
    match render.shape {
        Shape::Object => serde_json::to_value(object).unwrap_or(Value::Null),
        Shape::PartialMetadata => partial_metadata(object),
        Shape::Table => {
            let meta = ListMeta {
                resource_version: object.metadata().resource_version.clone(),
                ..ListMeta::default()
            };
            serde_json::to_value(table(&render.entry, &[object], meta, render.include, false))
                .unwrap_or(Value::Null)
        }
    }
}

/// The metadata of a BOOKMARK. The one ending a watch-list's initial events
/// also carries the list it stands for, empty and encoded as the client
/// asked (`kubernetes.io/initial-events-list-blueprint`, base64): 1.32
/// clients listing through a watch decode their list from it.
fn bookmark_meta(
    render: &Render,
    revision: u64,
    initial_events_end: bool,
) -> ApiResult<ObjectMeta> {
    let mut meta = ObjectMeta {
        resource_version: Some(revision.to_string()),
        ..ObjectMeta::default()
    };
    if initial_events_end {
        let blueprint = STANDARD.encode(list_blueprint(render)?);
        meta.annotations = Some(
            [
                ("k8s.io/initial-events-end".to_owned(), "true".to_owned()),
                (LIST_BLUEPRINT.to_owned(), blueprint),
            ]
            .into(),
        );
    }
    Ok(meta)
}

/// The annotation holding the encoded empty list on the closing BOOKMARK.
const LIST_BLUEPRINT: &str = "kubernetes.io/initial-events-list-blueprint";

/// An empty list of what the watch serves, in the negotiated format (Go
/// writes a list without items with `"items":null`).
fn list_blueprint(render: &Render) -> ApiResult<Vec<u8>> {
    let empty = ListMeta::default();
    match (render.format, render.shape) {
        (Format::Protobuf, Shape::PartialMetadata) => {
            Ok(protobuf::encode_partial_list(&empty, &[]))
        }
        (Format::Protobuf, _) => protobuf::encode_list(&render.entry, &empty, &[]),
        (_, Shape::PartialMetadata) => Ok(list_json("PartialObjectMetadataList", "meta.k8s.io/v1")),
        (_, _) => {
            let info = render.entry.info;
            Ok(list_json(&info.list_kind(), info.api_version()))
        }
    }
}

fn list_json(kind: &str, api_version: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "kind": kind, "apiVersion": api_version, "metadata": {}, "items": null
    }))
    .unwrap_or_default()
}

/// A BOOKMARK carries only the kind and a resourceVersion (plus the
/// `k8s.io/initial-events-end` annotation closing the initial state).
fn bookmark(render: &Render, revision: u64, initial_events_end: bool) -> ApiResult<Value> {
    let meta = bookmark_meta(render, revision, initial_events_end)?;
    let info = render.entry.info;
    Ok(match render.shape {
        Shape::PartialMetadata => {
            json!({ "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta })
        }
        _ => json!({ "kind": info.kind, "apiVersion": info.api_version(), "metadata": meta }),
    })
}
