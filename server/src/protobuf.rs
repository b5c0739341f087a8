//! `application/vnd.kubernetes.protobuf` at the HTTP edge: request bodies opened
//! from their `k8s\0` envelope, and responses (objects, lists, metadata-only
//! forms, Status, watch frames) encoded as kube-apiserver encodes them.
//!
//! Objects reach the wire through the kind's generated codec: the registry's
//! object is the kind's Rust value, which decodes and encodes itself. Lists and watch events are wrapped here, one copy of each item.

use kapi_runtime::meta::{ListMeta, ObjectMeta, Status};
use kapi_runtime::proto::{self, Field, Message, envelope, wire};
use kapi_runtime::scheme::KindEntry;

use std::sync::Arc;

use bytes::Bytes;

use crate::api_error::{ApiError, ApiResult};
use crate::body::{Input, Object};
use crate::cache::Cached;

/// The `apiVersion` of the metadata-only forms.
const META_V1: &str = "meta.k8s.io/v1";

/// Opens an enveloped body and checks that it holds what the request needs.
fn open<'a>(body: &'a [u8], api_version: &str, kind: &str) -> ApiResult<&'a [u8]> {
    let unknown = envelope::decode(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding protobuf body: {e}")))?;
    if unknown.kind != kind || unknown.api_version != api_version {
        return Err(ApiError::bad_request(format!(
            "the body holds {}/{} where {api_version}/{kind} was expected",
            unknown.api_version, unknown.kind
        )));
    }
    Ok(unknown.raw)
}

/// Decodes a create or update body of `entry`'s kind straight into its type.
pub fn decode_object(entry: &KindEntry, body: &[u8]) -> ApiResult<Input> {
    let Some(codec) = entry.proto else {
        return Err(ApiError::unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: \
             application/json, application/yaml",
        ));
    };
    let info = entry.info;
    let raw = open(body, info.api_version(), info.kind)?;
    let object = codec
        .decode(raw)
        .map_err(|e| ApiError::bad_request(format!("error decoding protobuf body: {e}")))?;
    Ok(Input::typed(Object::new(object)))
}

/// The kind's message for an object.
fn object_message(entry: &KindEntry, object: &Object) -> ApiResult<Vec<u8>> {
    let codec = entry.proto.ok_or_else(ApiError::not_acceptable)?;
    codec.encode(object.typed()).map_err(ApiError::internal)
}

/// The kind's message of a cached object, encoded once.
pub fn cached_message<'c>(entry: &KindEntry, cached: &'c Cached) -> ApiResult<&'c Bytes> {
    match cached.message(entry) {
        Some(message) => message.map_err(ApiError::internal),
        None => Err(ApiError::not_acceptable()),
    }
}

/// A cached object, enveloped (its message encoded once).
pub fn encode_cached(entry: &KindEntry, cached: &Cached) -> ApiResult<Vec<u8>> {
    let raw = cached_message(entry, cached)?;
    let info = entry.info;
    Ok(envelope::encode(info.api_version(), info.kind, raw))
}

/// One object, enveloped.
pub fn encode_object(entry: &KindEntry, object: &Object) -> ApiResult<Vec<u8>> {
    let raw = object_message(entry, object)?;
    Ok(envelope::encode(object.api_version(), object.kind(), &raw))
}

/// The body of a `...List` message: metadata = 1, items = 2 (every list kind
/// of Kubernetes has this shape; a test checks it against upstream).
fn list_message<I: AsRef<[u8]>>(meta: &ListMeta, items: &[I]) -> Vec<u8> {
    let len = meta.field_len(1)
        + items
            .iter()
            .map(|i| wire::len_field_len(2, i.as_ref().len()))
            .sum::<usize>();
    let mut buf = Vec::with_capacity(len);
    meta.encode_field(1, &mut buf);
    for item in items {
        wire::put_bytes(&mut buf, 2, item.as_ref());
    }
    buf
}

/// A list of `entry`'s kind, enveloped as `<Kind>List`.
pub fn encode_list(
    entry: &KindEntry,
    meta: &ListMeta,
    items: &[Arc<Cached>],
) -> ApiResult<Vec<u8>> {
    let (mut out, messages, tail) = list_parts(entry, meta, items)?;
    for message in &messages {
        wire::put_bytes(&mut out, 2, message);
    }
    out.extend_from_slice(&tail);
    Ok(out)
}

/// A `<Kind>List` of `entry`'s kind in three parts, for writing it as it
/// goes: the envelope and list metadata, the items' messages (each to be
/// written as field 2; encoded once per object, the watch cache keeps them),
/// and the envelope's tail.
pub fn list_parts(
    entry: &KindEntry,
    meta: &ListMeta,
    items: &[Arc<Cached>],
) -> ApiResult<(Vec<u8>, Vec<Bytes>, Vec<u8>)> {
    let messages = items
        .iter()
        .map(|item| cached_message(entry, item).cloned())
        .collect::<ApiResult<Vec<_>>>()?;
    let info = entry.info;
    let list_len = meta.field_len(1)
        + messages
            .iter()
            .map(|m| wire::len_field_len(2, m.len()))
            .sum::<usize>();
    let (mut head, tail) = envelope_parts(info.api_version(), &info.list_kind(), list_len);
    meta.encode_field(1, &mut head);
    Ok((head, messages, tail))
}

/// The `k8s\0` envelope around a message of `raw_len` bytes written
/// separately: what goes before the message and what after it (as
/// `envelope::encode` writes the whole).
fn envelope_parts(api_version: &str, kind: &str, raw_len: usize) -> (Vec<u8>, Vec<u8>) {
    let type_meta_len =
        wire::len_field_len(1, api_version.len()) + wire::len_field_len(2, kind.len());
    let mut head = Vec::with_capacity(type_meta_len + 32);
    head.extend_from_slice(envelope::MAGIC);
    wire::put_key(&mut head, 1, proto::WireType::Len);
    wire::put_varint(&mut head, type_meta_len as u64);
    wire::put_bytes(&mut head, 1, api_version.as_bytes());
    wire::put_bytes(&mut head, 2, kind.as_bytes());
    wire::put_key(&mut head, 2, proto::WireType::Len);
    wire::put_varint(&mut head, raw_len as u64);
    let mut tail = Vec::with_capacity(4);
    // contentEncoding and contentType: Go always writes its non-pointer strings.
    wire::put_bytes(&mut tail, 3, b"");
    wire::put_bytes(&mut tail, 4, b"");
    (head, tail)
}

/// The message of a metadata-only object: ObjectMeta at field 1, which is also
/// the start of every kind's message (so it serves bookmarks too).
fn metadata_message(meta: &ObjectMeta) -> Vec<u8> {
    let mut buf = Vec::with_capacity(meta.field_len(1));
    meta.encode_field(1, &mut buf);
    buf
}

/// meta.k8s.io/v1 PartialObjectMetadata, enveloped.
pub fn encode_partial(object: &Object) -> Vec<u8> {
    envelope::encode(
        META_V1,
        "PartialObjectMetadata",
        &metadata_message(object.metadata()),
    )
}

/// meta.k8s.io/v1 PartialObjectMetadataList, enveloped.
pub fn encode_partial_list(meta: &ListMeta, items: &[&Object]) -> Vec<u8> {
    let items: Vec<_> = items
        .iter()
        .map(|o| metadata_message(o.metadata()))
        .collect();
    envelope::encode(
        META_V1,
        "PartialObjectMetadataList",
        &list_message(meta, &items),
    )
}

/// A Status (an error, or the answer to a delete), enveloped as v1 Status.
pub fn encode_status(status: &Status) -> Vec<u8> {
    envelope::encode("v1", "Status", &status.encode_to_vec())
}

/// A BOOKMARK's object: the kind with only `metadata` set.
pub fn encode_bookmark(entry: &KindEntry, meta: &ObjectMeta) -> Vec<u8> {
    let info = entry.info;
    envelope::encode(info.api_version(), info.kind, &metadata_message(meta))
}

/// A BOOKMARK for a watch of PartialObjectMetadata: the metadata kind, not the
/// watched one (the metadata client's scheme knows no other).
pub fn encode_partial_bookmark(meta: &ObjectMeta) -> Vec<u8> {
    envelope::encode(META_V1, "PartialObjectMetadata", &metadata_message(meta))
}

/// One frame of a protobuf watch: a 4-byte big-endian length, then a
/// meta.k8s.io/v1 WatchEvent message (not enveloped, as kube-apiserver's stream
/// serializer writes it) whose `object.raw` is the enveloped object.
pub fn watch_frame(type_: &str, object: &[u8]) -> Vec<u8> {
    let mut buf = watch_frame_head(type_, object.len());
    wire::put_bytes(&mut buf, 1, object);
    buf
}

/// The watch frame of a cached object's event, its message encoded once: when
/// the object has none kept yet, the one it keeps is this frame's slice of it.
pub fn cached_watch_frame(entry: &KindEntry, type_: &str, cached: &Cached) -> ApiResult<Bytes> {
    let (api_version, kind) = (entry.info.api_version(), entry.info.kind);
    let frame = cached.message_frame(entry, |message| {
        let object_len = envelope::encoded_len(api_version, kind, message.len());
        let mut buf = watch_frame_head(type_, object_len);
        wire::put_key(&mut buf, 1, proto::WireType::Len);
        wire::put_varint(&mut buf, object_len as u64);
        let at = envelope::encode_into(&mut buf, api_version, kind, message);
        (buf, at)
    });
    match frame {
        Some(frame) => frame.map_err(ApiError::internal),
        None => Err(ApiError::not_acceptable()),
    }
}

/// A watch frame up to its enveloped object (field 1 of the RawExtension), with
/// room for it.
fn watch_frame_head(type_: &str, object_len: usize) -> Vec<u8> {
    let raw_extension_len = wire::len_field_len(1, object_len);
    let event_len = wire::len_field_len(1, type_.len()) + wire::len_field_len(2, raw_extension_len);
    let mut buf = Vec::with_capacity(4 + event_len);
    // Frames are far below 4 GiB: bodies are capped well under that.
    buf.extend_from_slice(&u32::try_from(event_len).unwrap_or(u32::MAX).to_be_bytes());
    wire::put_bytes(&mut buf, 1, type_.as_bytes());
    wire::put_key(&mut buf, 2, proto::WireType::Len);
    wire::put_varint(&mut buf, raw_extension_len as u64);
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_frames_match_go() {
        let frame = watch_frame("ADDED", b"k8s\0");
        let len = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
        assert_eq!(len, frame.len() - 4);
        assert_eq!(&frame[4..], b"\x0a\x05ADDED\x12\x06\x0a\x04k8s\0");
    }

    #[test]
    fn status_is_enveloped_v1() {
        let status = Status::failure(404, "NotFound", "x");
        let body = encode_status(&status);
        let u = envelope::decode(&body).unwrap();
        assert_eq!((u.api_version, u.kind), ("v1", "Status"));
        let back = Status::decode(u.raw).unwrap();
        assert_eq!(back.code, Some(404));
        assert_eq!(back.reason.as_deref(), Some("NotFound"));
    }
}
