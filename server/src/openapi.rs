//! A first OpenAPI v3 surface: every route and operation of every kind, with
//! `x-kubernetes-group-version-kind` and the query parameters, but no schemas yet
//! (they come with the OpenAPI issue).
//!
//! kubectl needs this much: before sending `fieldValidation=Strict` it checks in
//! `/openapi/v3` that the kind's PATCH operation declares that parameter, and
//! without the document it refuses to create anything.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kapi_runtime::ResourceInfo;
use kapi_runtime::scheme::Scheme;
use serde_json::{Value, json};

use crate::api_error::ApiError;
use crate::app::App;

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

fn respond(value: &Value) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => {
            let mut response = (StatusCode::OK, bytes).into_response();
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            response
        }
        Err(e) => ApiError::internal(e).into_response(),
    }
}

/// `/openapi/v3`: the index of group-version documents.
pub async fn index(State(app): State<Arc<App>>) -> Response {
    let paths: serde_json::Map<String, Value> = group_versions(app.registry.scheme())
        .into_keys()
        .map(|gv| {
            let url = format!("/openapi/v3/{gv}?hash={}", env!("CARGO_PKG_VERSION"));
            (gv, json!({ "serverRelativeURL": url }))
        })
        .collect();
    respond(&json!({ "paths": paths }))
}

/// `/openapi/v3/<api|apis>/...`: one group version.
pub async fn group_version(State(app): State<Arc<App>>, Path(path): Path<String>) -> Response {
    let Some(infos) = group_versions(app.registry.scheme()).remove(path.trim_matches('/')) else {
        return ApiError::no_route().into_response();
    };
    let mut paths = serde_json::Map::new();
    for info in infos {
        let base = if info.group.is_empty() {
            format!("/api/{}", info.version)
        } else {
            format!("/apis/{}/{}", info.group, info.version)
        };
        let scope = if info.namespaced {
            format!("{base}/namespaces/{{namespace}}/{}", info.plural)
        } else {
            format!("{base}/{}", info.plural)
        };
        paths.insert(scope.clone(), collection(info));
        paths.insert(format!("{scope}/{{name}}"), item(info));
        if info.status_subresource {
            paths.insert(format!("{scope}/{{name}}/status"), item(info));
        }
    }
    let doc = json!({
        "openapi": "3.0.0",
        "info": { "title": "Kubernetes", "version": concat!("v1.32.0-kapi.", env!("CARGO_PKG_VERSION")) },
        "paths": paths,
        "components": { "schemas": {} },
    });
    respond(&doc)
}

fn gvk(info: &ResourceInfo) -> Value {
    json!({ "group": info.group, "version": info.version, "kind": info.kind })
}

fn params(names: &[&str]) -> Value {
    Value::Array(names.iter().map(|n| json!({ "name": n, "in": "query", "schema": { "type": "string" }, "uniqueItems": true })).collect())
}

fn operation(info: &ResourceInfo, action: &str, query: &[&str]) -> Value {
    json!({
        "operationId": format!("{action}{}", info.kind),
        "parameters": params(query),
        "responses": { "200": { "description": "OK" } },
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk(info),
    })
}

const LIST_PARAMS: &[&str] = &[
    "labelSelector",
    "fieldSelector",
    "limit",
    "continue",
    "resourceVersion",
    "resourceVersionMatch",
    "watch",
    "allowWatchBookmarks",
    "sendInitialEvents",
    "timeoutSeconds",
];
const WRITE_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];
const DELETE_PARAMS: &[&str] = &[
    "dryRun",
    "gracePeriodSeconds",
    "propagationPolicy",
    "orphanDependents",
];

fn collection(info: &ResourceInfo) -> Value {
    json!({
        "get": operation(info, "list", LIST_PARAMS),
        "post": operation(info, "post", WRITE_PARAMS),
        "delete": operation(info, "deletecollection", DELETE_PARAMS),
    })
}

fn item(info: &ResourceInfo) -> Value {
    json!({
        "get": operation(info, "get", &[]),
        "put": operation(info, "put", WRITE_PARAMS),
        "patch": operation(info, "patch", WRITE_PARAMS),
        "delete": operation(info, "delete", DELETE_PARAMS),
    })
}
