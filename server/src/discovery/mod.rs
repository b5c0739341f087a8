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
    with_remote_discovery(app, core, &mut list);
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
    let mut list = discovery::group_list(&app.registry.scheme());
    with_remote_groups(&app, &mut list);
    document(&headers, &list, &list.types)
}

/// `/apis/<group>`.
pub async fn group(
    State(app): State<Arc<App>>,
    Path(group): Path<String>,
    headers: HeaderMap,
) -> Response {
    let scheme = app.registry.scheme();
    let mut found = discovery::group(&scheme, &group);
    with_remote_versions(&app, &group, &mut found);
    match found {
        Some(doc) => document(&headers, &doc, &doc.types),
        None => not_found(&scheme, &group),
    }
}

/// The order of groups and versions once other servers serve some, as
/// kube-aggregator orders them: groups by their highest
/// `groupPriorityMinimum`, versions by `versionPriority` then kube-aware
/// version order (a group version without an APIService yet counts 1000
/// and 15, as upstream's, and the aggregator's own group 20001, first);
/// groups of equal priority keep this server's order.
struct Order {
    priorities: crate::aggregator::Priorities,
}

impl Order {
    fn of(app: &App) -> Order {
        Order {
            priorities: app.remote.priorities(),
        }
    }

    fn priority(&self, group: &str, version: &str) -> (i64, i64) {
        // The aggregator's own group has no APIService and comes first.
        if group == "apiregistration.k8s.io" {
            return (20001, 15);
        }
        self.priorities
            .get(&(group.to_owned(), version.to_owned()))
            .copied()
            .unwrap_or((1000, 15))
    }

    fn group_key<'a>(
        &self,
        group: &str,
        versions: impl Iterator<Item = &'a str>,
    ) -> std::cmp::Reverse<i64> {
        std::cmp::Reverse(
            versions
                .map(|v| self.priority(group, v).0)
                .max()
                .unwrap_or(1000),
        )
    }

    fn sort_versions<T>(&self, group: &str, versions: &mut [T], version: impl Fn(&T) -> &str) {
        versions.sort_by(|a, b| {
            let (a, b) = (version(a), version(b));
            let (pa, pb) = (self.priority(group, a).1, self.priority(group, b).1);
            pb.cmp(&pa)
                .then_with(|| discovery::version_priority(a).cmp(&discovery::version_priority(b)))
        });
    }
}

/// `/apis` with the groups other servers serve.
fn with_remote_groups(app: &App, list: &mut kapi_runtime::meta::APIGroupList) {
    let remote = app.remote.all();
    if remote.is_empty() {
        return;
    }
    for ((group, version), _) in remote {
        if group.is_empty() {
            continue;
        }
        let versions = match list.groups.iter_mut().find(|g| g.name == group) {
            Some(found) => &mut found.versions,
            None => {
                list.groups.push(kapi_runtime::meta::APIGroup {
                    name: group.clone(),
                    ..Default::default()
                });
                let last = list.groups.len() - 1;
                &mut list.groups[last].versions
            }
        };
        if !versions.iter().any(|v| v.version == version) {
            versions.push(discovery_version(&group, &version));
        }
    }
    let order = Order::of(app);
    for group in &mut list.groups {
        order.sort_versions(&group.name, &mut group.versions, |v| &v.version);
        group.preferred_version = group.versions.first().cloned().unwrap_or_default();
    }
    list.groups.sort_by_cached_key(|g| {
        order.group_key(&g.name, g.versions.iter().map(|v| v.version.as_str()))
    });
}

/// `/apis/<group>` with the versions other servers serve.
fn with_remote_versions(app: &App, group: &str, found: &mut Option<kapi_runtime::meta::APIGroup>) {
    let remote: Vec<String> = app
        .remote
        .all()
        .into_iter()
        .filter(|((g, _), _)| g == group && !g.is_empty())
        .map(|((_, v), _)| v)
        .collect();
    if remote.is_empty() {
        return;
    }
    let doc = found.get_or_insert_with(|| kapi_runtime::meta::APIGroup {
        types: TypeMeta {
            kind: "APIGroup".into(),
            api_version: "v1".into(),
        },
        name: group.to_owned(),
        ..Default::default()
    });
    for version in remote {
        if !doc.versions.iter().any(|v| v.version == version) {
            doc.versions.push(discovery_version(group, &version));
        }
    }
    Order::of(app).sort_versions(group, &mut doc.versions, |v| &v.version);
    doc.preferred_version = doc.versions.first().cloned().unwrap_or_default();
}

fn discovery_version(group: &str, version: &str) -> kapi_runtime::meta::GroupVersionForDiscovery {
    kapi_runtime::meta::GroupVersionForDiscovery {
        group_version: format!("{group}/{version}"),
        version: version.to_owned(),
    }
}

/// Aggregated discovery with what other servers serve: a remote group
/// version's entry replaces a local one of the same name, as upstream's
/// aggregator source wins.
fn with_remote_discovery(
    app: &App,
    core: bool,
    list: &mut kapi_runtime::meta::APIGroupDiscoveryList,
) {
    let remote = app.remote.discovery();
    if remote.is_empty() {
        return;
    }
    let mut touched = false;
    for ((group, _), entry) in remote {
        if group.is_empty() != core {
            continue;
        }
        touched = true;
        let name = (!group.is_empty()).then(|| group.clone());
        let versions = match list.items.iter_mut().find(|g| g.metadata.name == name) {
            Some(found) => &mut found.versions,
            None => {
                list.items.push(kapi_runtime::meta::APIGroupDiscovery {
                    metadata: kapi_runtime::meta::ObjectMeta {
                        name,
                        ..Default::default()
                    },
                    versions: Vec::new(),
                });
                let last = list.items.len() - 1;
                &mut list.items[last].versions
            }
        };
        versions.retain(|v| v.version != entry.version);
        versions.push(entry);
    }
    if !touched {
        return;
    }
    let order = Order::of(app);
    for item in &mut list.items {
        let group = item.metadata.name.clone().unwrap_or_default();
        order.sort_versions(&group, &mut item.versions, |v| &v.version);
    }
    list.items.sort_by_cached_key(|g| {
        let group = g.metadata.name.clone().unwrap_or_default();
        order.group_key(&group, g.versions.iter().map(|v| v.version.as_str()))
    });
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
