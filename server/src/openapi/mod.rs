//! The OpenAPI documents, generated from the structs' schemas
//! (`kapi_runtime::openapi`) and the scheme's routes, built once on first use:
//!
//! - `/openapi/v2`: Swagger 2.0 JSON, every route and every definition, with an
//!   `ETag` (a conditional request gets 304);
//! - `/openapi/v3`: the index of group-version documents with their hashes, and
//!   `/openapi/v3/<api/v1|apis/<group>/<version>>`: OpenAPI 3.0 with the schemas
//!   that group version reaches; asked for with the current `?hash=`, the answer
//!   is immutable (cached for a year), as kube-apiserver serves them.
//!
//! kubectl reads these: `explain` prints the field docs, and before sending
//! `fieldValidation=Strict` it checks that the kind's PATCH operation declares it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use kapi_runtime::openapi_documents::documents;
use kapi_runtime::scheme::Scheme;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha512};

use crate::api_error::ApiError;

mod gnostic;
pub mod merge;

/// One serialized document (JSON, or protobuf for v2) and its content hash (SHA-512, upper-case hex, as
/// kube-apiserver's).
#[derive(Debug)]
struct Document {
    json: Bytes,
    hash: String,
}

impl Document {
    fn new(value: &Value) -> Document {
        Document::from_bytes(serde_json::to_vec(value).unwrap_or_default())
    }

    fn from_bytes(bytes: Vec<u8>) -> Document {
        let hash = Sha512::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect();
        Document {
            json: Bytes::from(bytes),
            hash,
        }
    }
}

/// Every document, built from the scheme on first use after the scheme
/// changed (a custom resource's definition came, changed or went).
#[derive(Debug, Default)]
pub struct OpenApiDocs {
    built: Mutex<Option<(Arc<Scheme>, Arc<Built>)>>,
    /// The v2 document with other servers' merged in (JSON and protobuf),
    /// for the scheme and the remote documents' generation it was made of.
    merged: Mutex<Option<Merged>>,
}

/// The merged v2 document (JSON, protobuf), with the scheme and the remote
/// documents' generation it was made of.
type Merged = (Arc<Scheme>, u64, Arc<(Document, Document)>);

/// Other servers' OpenAPI v2 documents, in the order they are merged, and
/// a number that changes whenever they do.
#[derive(Debug, Default)]
pub struct RemoteV2 {
    /// The documents, each kept to its group version's paths.
    pub documents: Vec<Arc<Value>>,
    /// Changes with the documents.
    pub generation: u64,
}

#[derive(Debug)]
struct Built {
    v2: Document,
    /// The v2 document in gnostic's protobuf form (its own hash: a cache keyed
    /// by `ETag` must not hand one form out for the other).
    v2_protobuf: Document,
    v3_index: Document,
    v3: BTreeMap<String, Document>,
}

impl OpenApiDocs {
    fn get(&self, scheme: &Arc<Scheme>) -> Arc<Built> {
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        match &*built {
            Some((for_scheme, docs)) if Arc::ptr_eq(for_scheme, scheme) => docs.clone(),
            _ => {
                // Built under the lock: concurrent first requests wait for
                // one build rather than each making its own.
                let docs = Arc::new(build(scheme));
                *built = Some((scheme.clone(), docs.clone()));
                docs
            }
        }
    }
}

fn build(scheme: &Scheme) -> Built {
    let docs = documents(scheme);
    let v3: BTreeMap<String, Document> = docs
        .v3
        .iter()
        .map(|(gv, doc)| (gv.clone(), Document::new(doc)))
        .collect();
    let index: Map<String, Value> = v3
        .iter()
        .map(|(gv, doc)| {
            let url = format!("/openapi/v3/{gv}?hash={}", doc.hash);
            (gv.clone(), json!({ "serverRelativeURL": url }))
        })
        .collect();
    Built {
        v2_protobuf: Document::from_bytes(gnostic::document(&docs.v2)),
        v2: Document::new(&docs.v2),
        v3_index: Document::new(&json!({ "paths": index })),
        v3,
    }
}

/// A document with its validators: 304 when the client's `If-None-Match`
/// already names it.
fn respond(doc: &Document, headers: &HeaderMap, immutable: bool) -> Response {
    let etag = format!("\"{}\"", doc.hash);
    let not_modified = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut response = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (StatusCode::OK, doc.json.clone()).into_response()
    };
    let out = response.headers_mut();
    out.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Ok(etag) = HeaderValue::from_str(&etag) {
        out.insert(header::ETAG, etag);
    }
    out.insert(header::VARY, HeaderValue::from_static("Accept"));
    if immutable {
        out.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, immutable"),
        );
        let expires = jiff::Timestamp::now()
            .checked_add(jiff::SignedDuration::from_hours(365 * 24))
            .unwrap_or_else(|_| jiff::Timestamp::now());
        let text = expires.strftime("%a, %d %b %Y %H:%M:%S GMT").to_string();
        if let Ok(value) = HeaderValue::from_str(&text) {
            out.insert(header::EXPIRES, value);
        }
    } else {
        out.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache, private"),
        );
    }
    response
}

/// `/openapi/v2`: JSON, or gnostic's protobuf when the client asks for it
/// (client-go does, always).
pub fn v2(
    docs: &OpenApiDocs,
    scheme: &Arc<Scheme>,
    remote: RemoteV2,
    headers: &HeaderMap,
) -> Response {
    if !remote.documents.is_empty() {
        return merged_v2(docs, scheme, remote, headers);
    }
    let built = docs.get(scheme);
    answer_v2(&built.v2, &built.v2_protobuf, headers)
}

/// The v2 document in the form the client asks for: gnostic's protobuf
/// or JSON.
fn answer_v2(json: &Document, protobuf: &Document, headers: &HeaderMap) -> Response {
    if !wants_protobuf(headers) {
        return respond(json, headers, false);
    }
    let mut response = respond(protobuf, headers, false);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(gnostic::CONTENT_TYPE),
    );
    response
}

/// `/openapi/v2` with other servers' documents merged after this server's.
fn merged_v2(
    docs: &OpenApiDocs,
    scheme: &Arc<Scheme>,
    remote: RemoteV2,
    headers: &HeaderMap,
) -> Response {
    let merged = {
        let mut cached = docs.merged.lock().unwrap_or_else(PoisonError::into_inner);
        match &*cached {
            Some((for_scheme, generation, merged))
                if Arc::ptr_eq(for_scheme, scheme) && *generation == remote.generation =>
            {
                merged.clone()
            }
            _ => {
                let built = docs.get(scheme);
                let mut spec: Value = match serde_json::from_slice(&built.v2.json) {
                    Ok(spec) => spec,
                    Err(e) => return ApiError::internal(e.to_string()).into_response(),
                };
                for other in &remote.documents {
                    merge::merge(&mut spec, other);
                }
                let merged = Arc::new((
                    Document::new(&spec),
                    Document::from_bytes(gnostic::document(&spec)),
                ));
                *cached = Some((scheme.clone(), remote.generation, merged.clone()));
                merged
            }
        }
    };
    answer_v2(&merged.0, &merged.1, headers)
}

fn wants_protobuf(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| {
            accept.split(',').any(|range| {
                range
                    .split(';')
                    .next()
                    .is_some_and(|m| m.trim() == gnostic::MEDIA_TYPE)
            })
        })
}

/// `/openapi/v3`: the index of group-version documents, with the entries
/// of other servers' indexes (`remote`) after this server's own.
pub fn index(
    docs: &OpenApiDocs,
    scheme: &Arc<Scheme>,
    remote: serde_json::Map<String, serde_json::Value>,
    headers: &HeaderMap,
) -> Response {
    let built = docs.get(scheme);
    if remote.is_empty() {
        return respond(&built.v3_index, headers, false);
    }
    let mut index: serde_json::Value = match serde_json::from_slice(&built.v3_index.json) {
        Ok(index) => index,
        Err(e) => return ApiError::internal(e.to_string()).into_response(),
    };
    if let Some(paths) = index.get_mut("paths").and_then(|p| p.as_object_mut()) {
        for (key, entry) in remote {
            paths.entry(key).or_insert(entry);
        }
    }
    respond(&Document::new(&index), headers, false)
}

/// `/openapi/v3/<api|apis>/...`: one group version; immutable when asked for
/// with its current hash, redirected to the current hash when asked for with
/// an old one.
pub fn group_version(
    (docs, scheme): (&OpenApiDocs, &Arc<Scheme>),
    path: &str,
    query: &BTreeMap<String, String>,
    headers: &HeaderMap,
) -> Response {
    let built = docs.get(scheme);
    let gv = path.trim_matches('/');
    let Some(doc) = built.v3.get(gv) else {
        return ApiError::no_route().into_response();
    };
    match query.get("hash") {
        Some(hash) if *hash == doc.hash => respond(doc, headers, true),
        Some(_) => {
            let location = format!("/openapi/v3/{gv}?hash={}", doc.hash);
            let mut response = StatusCode::MOVED_PERMANENTLY.into_response();
            let headers = response.headers_mut();
            if let Ok(value) = HeaderValue::from_str(&location) {
                headers.insert(header::LOCATION, value);
            }
            // As kube-apiserver: the redirect itself must not be cached.
            headers.insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("no-cache, private"),
            );
            response
        }
        None => respond(doc, headers, false),
    }
}
