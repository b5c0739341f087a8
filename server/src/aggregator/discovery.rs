//! What extension servers serve, for this server's aggregated discovery,
//! as kube-aggregator 1.32's discovery manager learns it: each remote
//! APIService's group version is read from its server's aggregated `/apis`
//! (or, from a server without one, its `/apis/<group>/<version>`,
//! converted), as `system:kube-aggregator`, within 5 seconds, when the
//! APIService changes and every minute. A version whose server cannot be
//! read is listed without resources, `Stale`.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use http_body_util::BodyExt;
use kapi_runtime::meta::{
    APIGroupDiscoveryList, APIResourceDiscovery, APIResourceList, APISubresourceDiscovery,
    APIVersionDiscovery, GroupVersionKind,
};
use tokio::sync::watch;

use super::{RemoteApis, RemoteVersion};
use crate::webhook_client::join_host_port;

/// How long one read of a server's discovery may take.
const TIMEOUT: Duration = Duration::from_secs(5);
/// How often every server is read again.
const REFRESH: Duration = Duration::from_secs(60);
/// The most of a discovery document read.
const MAX_BODY: usize = 16 << 20;

/// The aggregated forms asked for, newest first.
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

/// Reads the remote group versions' discovery until `shutdown`: at once
/// when the APIServices change, and every minute.
/// `ready` (`apiservice-discovery-controller` and
/// `apiservice-openapiv3-controller`) are done after the first round.
/// The first round waits for `after` (the APIServices' registration) to be
/// done, as upstream's discovery controller waits for the registration.
pub async fn run(
    apis: Arc<RemoteApis>,
    (after, ready): (
        Option<crate::post_start::Handle>,
        Vec<crate::post_start::Handle>,
    ),
    mut shutdown: watch::Receiver<bool>,
) {
    if let Some(after) = after {
        while after.state().is_err() {
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
        }
    }
    let mut changed = apis.changed.subscribe();
    let mut refresh = tokio::time::interval(REFRESH);
    loop {
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = refresh.tick() => {}
            result = changed.changed() => {
                if result.is_err() {
                    return;
                }
            }
        }
        let mut reads = tokio::task::JoinSet::new();
        for ((group, version), remote) in apis.all() {
            let apis = apis.clone();
            reads.spawn(async move {
                // The server's OpenAPI v3 index (first: once a kind
                // is discovered, its documentation is there); the last one read is kept
                // while it cannot be read again.
                match openapi_index(&apis, &remote).await {
                    Ok(paths) => apis.indexed(&group, &version, paths),
                    Err(e) => tracing::debug!(apiservice = %remote.apiservice, error = %e,
                        "could not read the OpenAPI index of an APIService"),
                }
                // Its OpenAPI v2 document: none when it has none (404); the
                // last one read is kept while it cannot be read again.
                match openapi_v2(&apis, &remote).await {
                    Ok(spec) => apis.specified(&group, &version, spec),
                    Err(e) => tracing::debug!(apiservice = %remote.apiservice, error = %e,
                        "could not read the OpenAPI v2 document of an APIService"),
                }
                let found = read(&apis, &remote, &group, &version).await;
                if let Err(e) = &found {
                    tracing::debug!(apiservice = %remote.apiservice, error = %e,
                        "could not read the discovery of an APIService");
                }
                apis.discovered(&group, &version, found.ok());
            });
        }
        while reads.join_next().await.is_some() {}
        for hook in &ready {
            hook.done();
        }
    }
}

/// The discovery of `group`/`version` from `remote`'s server.
async fn read(
    apis: &RemoteApis,
    remote: &RemoteVersion,
    group: &str,
    version: &str,
) -> Result<APIVersionDiscovery, String> {
    if !remote.available {
        return Err("service unavailable".to_owned());
    }
    let (status, content_type, body) = get(apis, remote, "/apis", AGGREGATED, true).await?;
    let aggregated = content_type.contains("g=apidiscovery.k8s.io")
        && content_type.contains("as=APIGroupDiscoveryList")
        && (content_type.contains("v=v2;") || content_type.contains("v=v2beta1"));
    if status == 200 && aggregated {
        let list: APIGroupDiscoveryList =
            serde_json::from_slice(&body).map_err(|e| e.to_string())?;
        let found = list
            .items
            .into_iter()
            .find(|g| g.metadata.name.as_deref().unwrap_or_default() == group)
            .and_then(|g| g.versions.into_iter().find(|v| v.version == version));
        let mut found = found.unwrap_or_else(|| APIVersionDiscovery {
            version: version.to_owned(),
            ..Default::default()
        });
        found.freshness = Some("Current".to_owned());
        return Ok(found);
    }
    // A server without aggregated discovery: its resource list, converted.
    let path = if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    };
    let (status, _, body) = get(apis, remote, &path, "application/json", false).await?;
    if status != 200 {
        return Err(format!("{path} answered {status}"));
    }
    let list: APIResourceList = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
    convert(list, version)
}

/// The paths of the server's `/openapi/v3` index, read as
/// `system:aggregator`, as kube-aggregator's OpenAPI v3 controller reads it.
async fn openapi_index(
    apis: &RemoteApis,
    remote: &RemoteVersion,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    if !remote.available {
        return Err("service unavailable".to_owned());
    }
    let (status, _, body) = get_as(
        apis,
        remote,
        "/openapi/v3",
        "application/json",
        ("system:aggregator", None),
    )
    .await?;
    if status != 200 {
        return Err(format!("/openapi/v3 answered {status}"));
    }
    let index: serde_json::Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
    match index.get("paths") {
        Some(serde_json::Value::Object(paths)) => Ok(paths.clone()),
        _ => Err("the OpenAPI v3 index has no paths".to_owned()),
    }
}

/// The server's `/openapi/v2` document, read as `system:aggregator`, as
/// kube-aggregator's OpenAPI controller downloads it: `None` for a 404.
async fn openapi_v2(
    apis: &RemoteApis,
    remote: &RemoteVersion,
) -> Result<Option<serde_json::Value>, String> {
    if !remote.available {
        return Err("service unavailable".to_owned());
    }
    let (status, _, body) = get_as(
        apis,
        remote,
        "/openapi/v2",
        "application/json",
        ("system:aggregator", None),
    )
    .await?;
    match status {
        200 => serde_json::from_slice(&body)
            .map(Some)
            .map_err(|e| e.to_string()),
        404 => Ok(None),
        other => Err(format!("/openapi/v2 answered {other}")),
    }
}

/// A GET of `path` at the server as `system:kube-aggregator` (in
/// `system:masters` when `masters`): status, content type and body.
async fn get(
    apis: &RemoteApis,
    remote: &RemoteVersion,
    path: &str,
    accept: &str,
    masters: bool,
) -> Result<(u16, String, Vec<u8>), String> {
    let group = masters.then_some("system:masters");
    get_as(
        apis,
        remote,
        path,
        accept,
        ("system:kube-aggregator", group),
    )
    .await
}

/// A GET of `path` at the server as `user` (with the group, if any).
async fn get_as(
    apis: &RemoteApis,
    remote: &RemoteVersion,
    path: &str,
    accept: &str,
    (user, group): (&str, Option<&str>),
) -> Result<(u16, String, Vec<u8>), String> {
    let transport = remote.transport().map_err(str::to_owned)?;
    let service = &remote.service;
    let exchange = async {
        let (host, port) = apis
            .resolver
            .resolve(&service.namespace, &service.name, service.port)
            .await?;
        let authority = join_host_port(&host, port);
        let mut request = hyper::Request::get(format!("https://{authority}{path}"))
            .header(hyper::header::HOST, authority.as_str())
            .header(hyper::header::ACCEPT, accept)
            .header("x-remote-user", user);
        if let Some(group) = group {
            request = request.header("x-remote-group", group);
        }
        let request = request.body(Body::empty()).map_err(|e| e.to_string())?;
        let answer = transport.send(request).await?;
        let status = answer.status().as_u16();
        let content_type = answer
            .headers()
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = http_body_util::Limited::new(answer.into_body(), MAX_BODY)
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok::<_, String>((status, content_type, body.to_vec()))
    };
    tokio::time::timeout(TIMEOUT, exchange)
        .await
        .map_err(|_| "request timed out".to_owned())?
}

/// apiserver's `ConvertGroupVersionIntoToDiscovery`: resources first, in
/// order, then each subresource under its resource (a resource made for a
/// subresource whose resource is not listed); the kinds taken as listed,
/// so a list without groups gives `{"group":"","version":"",...}` as
/// upstream's does.
fn convert(list: APIResourceList, version: &str) -> Result<APIVersionDiscovery, String> {
    let scope = |namespaced: bool| if namespaced { "Namespaced" } else { "Cluster" }.to_owned();
    let mut resources: Vec<APIResourceDiscovery> = Vec::new();
    for r in list.resources.iter().filter(|r| !r.name.contains('/')) {
        resources.push(APIResourceDiscovery {
            resource: r.name.clone(),
            response_kind: GroupVersionKind {
                group: r.group.clone().unwrap_or_default(),
                version: r.version.clone().unwrap_or_default(),
                kind: r.kind.clone(),
            },
            scope: scope(r.namespaced),
            singular_resource: r.singular_name.clone(),
            verbs: r.verbs.clone(),
            short_names: r.short_names.clone().filter(|s| !s.is_empty()),
            categories: r.categories.clone().filter(|c| !c.is_empty()),
            subresources: None,
        });
    }
    for r in list.resources.iter().filter(|r| r.name.contains('/')) {
        let Some((parent, sub)) = r.name.split_once('/') else {
            continue;
        };
        let at = match resources.iter().position(|p| p.resource == parent) {
            Some(at) => at,
            None => {
                resources.push(APIResourceDiscovery {
                    resource: parent.to_owned(),
                    scope: scope(r.namespaced),
                    ..Default::default()
                });
                resources.len() - 1
            }
        };
        let resource = &mut resources[at];
        if resource.scope != scope(r.namespaced) {
            return Err(format!(
                "Error: Parent resource scope doesn't match subresource scope: {}",
                r.name
            ));
        }
        let response_kind = (!r.kind.is_empty()).then(|| GroupVersionKind {
            group: r.group.clone().unwrap_or_default(),
            version: r.version.clone().unwrap_or_default(),
            kind: r.kind.clone(),
        });
        resource
            .subresources
            .get_or_insert_with(Vec::new)
            .push(APISubresourceDiscovery {
                subresource: sub.to_owned(),
                response_kind: Some(response_kind.unwrap_or_default()),
                verbs: r.verbs.clone(),
            });
    }
    Ok(APIVersionDiscovery {
        version: version.to_owned(),
        resources,
        freshness: Some("Current".to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_lists_convert_as_upstream_converts_them() {
        let list: APIResourceList = serde_json::from_value(serde_json::json!({
            "groupVersion": "wardle.example.com/v1alpha1",
            "resources": [
                {"name": "flunders", "singularName": "flunder", "namespaced": true,
                    "kind": "Flunder", "verbs": ["get", "list"], "shortNames": ["fl"]},
                {"name": "flunders/status", "singularName": "", "namespaced": true,
                    "kind": "Flunder", "verbs": ["get"]},
                {"name": "fischers/scale", "singularName": "", "namespaced": false,
                    "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get"]}
            ]
        }))
        .unwrap();
        let converted = serde_json::to_value(convert(list, "v1alpha1").unwrap()).unwrap();
        assert_eq!(
            converted,
            serde_json::json!({"version": "v1alpha1", "freshness": "Current", "resources": [
                {"resource": "flunders", "responseKind": {"group": "", "version": "", "kind": "Flunder"},
                    "scope": "Namespaced", "singularResource": "flunder", "verbs": ["get", "list"],
                    "shortNames": ["fl"], "subresources": [{"subresource": "status",
                        "responseKind": {"group": "", "version": "", "kind": "Flunder"}, "verbs": ["get"]}]},
                {"resource": "fischers", "responseKind": {"group": "", "version": "", "kind": ""},
                    "scope": "Cluster", "singularResource": "", "verbs": [],
                    "subresources": [{"subresource": "scale",
                        "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                        "verbs": ["get"]}]}
            ]})
        );
    }
}
