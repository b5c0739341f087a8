//! Discovery endpoints: `/api`, `/apis` (legacy or aggregated v2 by Accept),
//! `/api/v1`, `/apis/<group>`, `/apis/<group>/<version>`, and `/version`.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kapi_runtime::discovery;
use kapi_runtime::meta::{APIVersions, ServerAddressByClientCIDR, TypeMeta};
use serde::Serialize;

use kapi_runtime::proto::{Message, envelope};

use crate::api_error::ApiError;
use crate::negotiation::{self, Output};
use crate::state::App;

/// The aggregated discovery version a client asked for, if any.
fn aggregated_version(headers: &HeaderMap) -> Option<&'static str> {
    let accept = headers.get(header::ACCEPT)?.to_str().ok()?;
    for range in accept.split(',') {
        let params: Vec<&str> = range.split(';').map(str::trim).collect();
        let wants = |p: &str| params.contains(&p);
        if wants("g=apidiscovery.k8s.io") && wants("as=APIGroupDiscoveryList") {
            if wants("v=v2") {
                return Some("v2");
            }
            if wants("v=v2beta1") {
                return Some("v2beta1");
            }
        }
    }
    None
}

/// A legacy discovery document in the format the client prefers: protobuf
/// (enveloped with the document's own `apiVersion` and `kind`, as kube-apiserver
/// does) or JSON.
fn document<T: Serialize + Message>(headers: &HeaderMap, value: &T, types: &TypeMeta) -> Response {
    if negotiation::prefers_protobuf(headers) {
        let body = envelope::encode(&types.api_version, &types.kind, &value.encode_to_vec());
        let mut response = (StatusCode::OK, body).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(envelope::MEDIA_TYPE),
        );
        return response;
    }
    json(value, "application/json")
}

fn json<T: Serialize>(value: &T, content_type: &str) -> Response {
    match negotiation::json_body(value) {
        Ok(bytes) => {
            let mut response = (StatusCode::OK, bytes).into_response();
            if let Ok(v) = HeaderValue::from_str(content_type) {
                response.headers_mut().insert(header::CONTENT_TYPE, v);
            }
            response
        }
        Err(e) => ApiError::internal(e).into_response(),
    }
}

fn aggregated(app: &App, core: bool, version: &str, headers: &HeaderMap) -> Response {
    let mut list = discovery::aggregated(&app.registry.scheme(), core);
    list.types.api_version = format!("apidiscovery.k8s.io/{version}");
    let content_type =
        format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList");
    let bytes = match negotiation::json_body(&list) {
        Ok(bytes) => bytes,
        Err(e) => return ApiError::internal(e).into_response(),
    };
    // As upstream: the document's hash as its ETag (uppercase hex of its
    // SHA-512), a 304 for a client that has it, cacheable by anyone.
    use sha2::Digest as _;
    let hash: String = sha2::Sha512::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect();
    let etag = format!("\"{hash}\"");
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == etag);
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (StatusCode::OK, bytes).into_response()
    };
    let out = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&content_type) {
        out.insert(header::CONTENT_TYPE, v);
    }
    if let Ok(v) = HeaderValue::from_str(&etag) {
        out.insert(header::ETAG, v);
    }
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static("public"));
    out.insert(header::VARY, HeaderValue::from_static("Accept"));
    response
}

/// `/api`.
pub async fn core(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Some(version) = aggregated_version(&headers) {
        return aggregated(&app, true, version, &headers);
    }
    let versions = APIVersions {
        types: TypeMeta {
            kind: "APIVersions".into(),
            api_version: String::new(),
        },
        versions: vec!["v1".into()],
        server_address_by_client_cidrs: vec![ServerAddressByClientCIDR {
            client_cidr: "0.0.0.0/0".into(),
            server_address: app.address.clone(),
        }],
    };
    document(&headers, &versions, &versions.types)
}

/// `/apis`.
pub async fn groups(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Some(version) = aggregated_version(&headers) {
        return aggregated(&app, false, version, &headers);
    }
    let list = discovery::group_list(&app.registry.scheme());
    document(&headers, &list, &list.types)
}

/// `/apis/<group>`.
pub async fn group(
    State(app): State<Arc<App>>,
    Path(group): Path<String>,
    headers: HeaderMap,
) -> Response {
    let scheme = app.registry.scheme();
    match discovery::group(&scheme, &group) {
        Some(doc) => document(&headers, &doc, &doc.types),
        None => not_found(&scheme, &group),
    }
}

/// `/api/<version>`.
pub async fn core_version(
    State(app): State<Arc<App>>,
    Path(version): Path<String>,
    headers: HeaderMap,
) -> Response {
    resources(&app, &headers, "", &version)
}

/// `/apis/<group>/<version>`.
pub async fn group_version(
    State(app): State<Arc<App>>,
    Path((group, version)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    resources(&app, &headers, &group, &version)
}

fn resources(app: &App, headers: &HeaderMap, group: &str, version: &str) -> Response {
    let scheme = app.registry.scheme();
    match discovery::resource_list(&scheme, group, version) {
        Some(doc) => document(headers, &doc, &doc.types),
        None => not_found(&scheme, group),
    }
}

/// A discovery path nothing serves: a Status in a group of compiled kinds,
/// the plain not-found of upstream's handler chain in any other (a group of
/// custom resources, or one that is gone).
fn not_found(scheme: &kapi_runtime::scheme::Scheme, group: &str) -> Response {
    if scheme
        .entries()
        .any(|e| e.info.group == group && !e.is_custom())
    {
        ApiError::no_route().into_response()
    } else {
        crate::api_error::page_not_found()
    }
}

/// `/version`: version.Info. kubectl prints `gitVersion` as the server version.
/// It has no protobuf form: a client accepting only protobuf gets 406, as from
/// kube-apiserver.
pub async fn version(headers: HeaderMap) -> Response {
    if Output::from_headers(&headers, false).is_err() {
        let error = ApiError::not_acceptable_json_only();
        return if negotiation::prefers_protobuf(&headers) {
            error.into_protobuf_response()
        } else {
            error.into_response()
        };
    }
    let info = serde_json::json!({
        "major": "1",
        "minor": "32",
        "gitVersion": concat!("v1.32.0-kapi.", env!("CARGO_PKG_VERSION")),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    });
    json(&info, "application/json")
}
