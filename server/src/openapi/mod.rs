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

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use kapi_runtime::ResourceInfo;
use kapi_runtime::openapi::{referenced, scheme_definitions};
use kapi_runtime::scheme::Scheme;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha512};

use crate::api_error::ApiError;
use crate::app::App;

mod gnostic;

/// The title and version every document carries.
const INFO_VERSION: &str = concat!("v1.32.0-kapi.", env!("CARGO_PKG_VERSION"));

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

/// Every document, built from the scheme on first use.
#[derive(Debug, Default)]
pub struct OpenApiDocs {
    built: OnceLock<Built>,
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
    fn get(&self, scheme: &Scheme) -> &Built {
        self.built.get_or_init(|| build(scheme))
    }
}

fn build(scheme: &Scheme) -> Built {
    let definitions = scheme_definitions(scheme).into_inner();
    let gvs = group_versions(scheme);
    let mut v2_paths = Map::new();
    let mut v3 = BTreeMap::new();
    for (gv, infos) in &gvs {
        v2_paths.extend(paths(&definitions, infos, false));
        let paths = paths(&definitions, infos, true);
        let roots = infos.iter().flat_map(|info| {
            let name = kind_definition(&definitions, info);
            [name.clone(), format!("{name}List")]
        });
        let request_types = ["DeleteOptions", "Status", "Patch"]
            .map(|t| format!("io.k8s.apimachinery.pkg.apis.meta.v1.{t}"));
        let schemas = reachable(&definitions, roots.chain(request_types))
            .into_iter()
            .filter_map(|name| {
                let schema = definitions.get(&name)?;
                Some((name, to_v3(schema)))
            })
            .collect::<Map<String, Value>>();
        let doc = json!({
            "openapi": "3.0.0",
            "info": { "title": "Kubernetes", "version": INFO_VERSION },
            "paths": paths,
            "components": { "schemas": schemas },
        });
        v3.insert(gv.clone(), Document::new(&doc));
    }
    let index: Map<String, Value> = v3
        .iter()
        .map(|(gv, doc)| {
            let url = format!("/openapi/v3/{gv}?hash={}", doc.hash);
            (gv.clone(), json!({ "serverRelativeURL": url }))
        })
        .collect();
    let v2 = json!({
        "swagger": "2.0",
        "info": { "title": "Kubernetes", "version": INFO_VERSION },
        "paths": v2_paths,
        "definitions": definitions,
    });
    Built {
        v2_protobuf: Document::from_bytes(gnostic::document(&v2)),
        v2: Document::new(&v2),
        v3_index: Document::new(&json!({ "paths": index })),
        v3,
    }
}

/// The definition name of a kind (what its schema refers to).
fn kind_definition(definitions: &BTreeMap<String, Value>, info: &ResourceInfo) -> String {
    definitions
        .iter()
        .find(|(_, schema)| {
            schema
                .get("x-kubernetes-group-version-kind")
                .and_then(|g| g.get(0))
                .is_some_and(|g| {
                    g["group"] == info.group
                        && g["version"] == info.version
                        && g["kind"] == info.kind
                })
        })
        .map(|(name, _)| name.clone())
        .unwrap_or_default()
}

/// Every definition reachable from `roots` through `$ref`s.
fn reachable(
    definitions: &BTreeMap<String, Value>,
    roots: impl IntoIterator<Item = String>,
) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<String> = roots.into_iter().collect();
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(schema) = definitions.get(&name) {
            collect_refs(schema, &mut todo);
        }
    }
    seen
}

fn collect_refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(name) = referenced(schema) {
                out.push(name.to_owned());
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// A v2 schema in OpenAPI 3 form: references point into `components/schemas`,
/// and a reference with siblings (a property's description) is wrapped in
/// `allOf`, as kube-apiserver writes them.
fn to_v3(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (key, value) in map {
                if key == "$ref" {
                    continue;
                }
                out.insert(key.clone(), to_v3(value));
            }
            if let Some(name) = referenced(schema) {
                let reference = json!({ "$ref": format!("#/components/schemas/{name}") });
                if out.is_empty() {
                    return reference;
                }
                out.insert("allOf".into(), json!([reference]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(to_v3).collect()),
        other => other.clone(),
    }
}

fn group_versions(scheme: &Scheme) -> BTreeMap<String, Vec<&'static ResourceInfo>> {
    let mut out: BTreeMap<String, Vec<&'static ResourceInfo>> = BTreeMap::new();
    for entry in scheme.entries() {
        let info = entry.info;
        let path = if info.group.is_empty() {
            format!("api/{}", info.version)
        } else {
            format!("apis/{}/{}", info.group, info.version)
        };
        out.entry(path).or_default().push(info);
    }
    out
}

/// The routes of `infos` as path items, in OpenAPI 2 or 3 form.
fn paths(
    definitions: &BTreeMap<String, Value>,
    infos: &[&'static ResourceInfo],
    v3: bool,
) -> Map<String, Value> {
    let mut paths = Map::new();
    for info in infos {
        let kind = kind_definition(definitions, info);
        let ops = Operations {
            info,
            v3,
            kind: &kind,
        };
        let base = if info.group.is_empty() {
            format!("/api/{}", info.version)
        } else {
            format!("/apis/{}/{}", info.group, info.version)
        };
        let scope = if info.namespaced {
            paths.insert(format!("{base}/{}", info.plural), ops.all_namespaces());
            format!("{base}/namespaces/{{namespace}}/{}", info.plural)
        } else {
            format!("{base}/{}", info.plural)
        };
        paths.insert(scope.clone(), ops.collection());
        paths.insert(format!("{scope}/{{name}}"), ops.item(""));
        if info.status_subresource {
            paths.insert(format!("{scope}/{{name}}/status"), ops.item("Status"));
        }
    }
    paths
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
pub async fn v2(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let built = app.openapi.get(app.registry.scheme());
    let wants_protobuf = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| {
            accept.split(',').any(|range| {
                range
                    .split(';')
                    .next()
                    .is_some_and(|m| m.trim() == gnostic::MEDIA_TYPE)
            })
        });
    if !wants_protobuf {
        return respond(&built.v2, &headers, false);
    }
    let mut response = respond(&built.v2_protobuf, &headers, false);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(gnostic::CONTENT_TYPE),
    );
    response
}

/// `/openapi/v3`: the index of group-version documents.
pub async fn index(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let built = app.openapi.get(app.registry.scheme());
    respond(&built.v3_index, &headers, false)
}

/// `/openapi/v3/<api|apis>/...`: one group version; immutable when asked for
/// with its current hash, redirected to the current hash when asked for with
/// an old one.
pub async fn group_version(
    State(app): State<Arc<App>>,
    Path(path): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let built = app.openapi.get(app.registry.scheme());
    let gv = path.trim_matches('/');
    let Some(doc) = built.v3.get(gv) else {
        return ApiError::no_route().into_response();
    };
    match query.get("hash") {
        Some(hash) if *hash == doc.hash => respond(doc, &headers, true),
        Some(_) => {
            let location = format!("/openapi/v3/{gv}?hash={}", doc.hash);
            let mut response = StatusCode::MOVED_PERMANENTLY.into_response();
            if let Ok(value) = HeaderValue::from_str(&location) {
                response.headers_mut().insert(header::LOCATION, value);
            }
            response
        }
        None => respond(doc, &headers, false),
    }
}

fn gvk(info: &ResourceInfo) -> Value {
    json!({ "group": info.group, "version": info.version, "kind": info.kind })
}

/// The group and version as operation ids spell them: `CoreV1`, `AppsV1`,
/// `RbacAuthorizationV1` (the `.k8s.io` suffix dropped, each part capitalised).
fn id_group_version(info: &ResourceInfo) -> String {
    let group = if info.group.is_empty() {
        "core"
    } else {
        info.group.trim_end_matches(".k8s.io")
    };
    let mut out: String = group.split('.').map(capitalize).collect();
    out.push_str(&capitalize(info.version));
    out
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

const LIST_PARAMS: &[&str] = &[
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
];
const WRITE_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];
const PATCH_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation", "force"];
const DELETE_PARAMS: &[&str] = &[
    "dryRun",
    "gracePeriodSeconds",
    "orphanDependents",
    "propagationPolicy",
];
const DELETE_COLLECTION_PARAMS: &[&str] = &[
    "continue",
    "dryRun",
    "fieldSelector",
    "gracePeriodSeconds",
    "labelSelector",
    "limit",
    "orphanDependents",
    "propagationPolicy",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
];

/// The operations of one kind, in OpenAPI 2 or 3 form.
struct Operations<'a> {
    info: &'a ResourceInfo,
    v3: bool,
    /// The kind's definition name.
    kind: &'a str,
}

impl Operations<'_> {
    fn all_namespaces(&self) -> Value {
        let id = format!(
            "list{}{}ForAllNamespaces",
            id_group_version(self.info),
            self.info.kind
        );
        json!({ "get": self.operation(&id, "list", LIST_PARAMS, None, &self.list_ref()) })
    }

    fn collection(&self) -> Value {
        let (gv, kind, ns) = self.names();
        json!({
            "get": self.operation(&format!("list{gv}{ns}{kind}"), "list", LIST_PARAMS, None, &self.list_ref()),
            "post": self.operation(&format!("create{gv}{ns}{kind}"), "post", WRITE_PARAMS, Some(self.kind_ref()), &self.kind_ref()),
            "delete": self.operation(&format!("delete{gv}Collection{ns}{kind}"), "deletecollection", DELETE_COLLECTION_PARAMS, Some(delete_options()), &status_ref()),
        })
    }

    /// `{name}` (suffix `""`) or a subresource of it (`"Status"`).
    fn item(&self, suffix: &str) -> Value {
        let (gv, kind, ns) = self.names();
        let kind = format!("{kind}{suffix}");
        let mut ops = json!({
            "get": self.operation(&format!("read{gv}{ns}{kind}"), "get", &[], None, &self.kind_ref()),
            "put": self.operation(&format!("replace{gv}{ns}{kind}"), "put", WRITE_PARAMS, Some(self.kind_ref()), &self.kind_ref()),
            "patch": self.operation(&format!("patch{gv}{ns}{kind}"), "patch", PATCH_PARAMS, Some(patch_ref()), &self.kind_ref()),
        });
        if suffix.is_empty() {
            ops["delete"] = self.operation(
                &format!("delete{gv}{ns}{kind}"),
                "delete",
                DELETE_PARAMS,
                Some(delete_options()),
                &status_ref(),
            );
        }
        ops
    }

    fn names(&self) -> (String, &str, &str) {
        let ns = if self.info.namespaced {
            "Namespaced"
        } else {
            ""
        };
        (id_group_version(self.info), self.info.kind, ns)
    }

    fn kind_ref(&self) -> Value {
        self.reference(self.kind)
    }

    fn list_ref(&self) -> Value {
        self.reference(&format!("{}List", self.kind))
    }

    fn reference(&self, name: &str) -> Value {
        let prefix = if self.v3 {
            "#/components/schemas/"
        } else {
            "#/definitions/"
        };
        json!({ "$ref": format!("{prefix}{name}") })
    }

    fn operation(
        &self,
        id: &str,
        action: &str,
        query: &[&str],
        body: Option<Value>,
        response: &Value,
    ) -> Value {
        let mut parameters: Vec<Value> = query
            .iter()
            .map(|name| {
                if self.v3 {
                    json!({ "name": name, "in": "query", "schema": { "type": "string", "uniqueItems": true } })
                } else {
                    json!({ "name": name, "in": "query", "type": "string", "uniqueItems": true })
                }
            })
            .collect();
        let response = self.v3_refs(response);
        let mut op = json!({
            "operationId": id,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk(self.info),
        });
        if self.v3 {
            op["responses"] = json!({ "200": { "description": "OK", "content": { "application/json": { "schema": response } } } });
            if let Some(body) = body {
                op["requestBody"] =
                    json!({ "content": { "*/*": { "schema": self.v3_refs(&body) } } });
            }
        } else {
            op["responses"] = json!({ "200": { "description": "OK", "schema": response } });
            if let Some(body) = body {
                parameters.insert(
                    0,
                    json!({ "name": "body", "in": "body", "required": true, "schema": body }),
                );
            }
        }
        op["parameters"] = Value::Array(parameters);
        op
    }

    fn v3_refs(&self, schema: &Value) -> Value {
        if self.v3 {
            to_v3(schema)
        } else {
            schema.clone()
        }
    }
}

fn delete_options() -> Value {
    json!({ "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions" })
}

fn status_ref() -> Value {
    json!({ "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status" })
}

fn patch_ref() -> Value {
    json!({ "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch" })
}
