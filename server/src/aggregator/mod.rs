//! The aggregator in front of the server (kube-aggregator's proxy): group
//! versions that another server serves, and the filter that passes their
//! requests on to it after authentication, audit, priority and fairness
//! and authorization have run here, as kube-apiserver's aggregator does.
//!
//! What fills the table (APIService objects, their availability) is
//! Kubernetes' built-in behaviour and lives with the APIService kind; this
//! module knows only group versions, the Service behind each, how to
//! trust it, and how to find the Service's address ([`Resolve`]).

pub mod discovery;
mod proxy;

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use kapi_runtime::meta::APIVersionDiscovery;

use crate::tls_client::{Identity, Transport, Trust};
pub use proxy::go_query;

use crate::webhook_client::Resolve;

/// The Service an APIService names (`spec.service`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceTarget {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its port (443 when the APIService gives none).
    pub port: i32,
}

impl ServiceTarget {
    /// The name the server's certificate must carry: `<name>.<namespace>.svc`.
    pub fn server_name(&self) -> String {
        format!("{}.{}.svc", self.name, self.namespace)
    }
}

/// A group version served by another server.
#[derive(Debug)]
pub struct RemoteVersion {
    /// The APIService's name (`<version>.<group>`).
    pub apiservice: String,
    /// Where it is served.
    pub service: ServiceTarget,
    /// How the server is trusted.
    pub trust: Trust,
    /// Whether the APIService is `Available`: requests to one that is not
    /// get 503 without being passed on.
    pub available: bool,
    /// The transport, or why it could not be built.
    transport: Result<Transport, String>,
}

impl RemoteVersion {
    /// The transport to the server, or why there is none.
    pub fn transport(&self) -> Result<&Transport, &str> {
        self.transport.as_ref().map_err(String::as_str)
    }
}

/// The group versions served elsewhere, and how to reach them.
pub struct RemoteApis {
    versions: RwLock<BTreeMap<(String, String), Arc<RemoteVersion>>>,
    resolver: Arc<dyn Resolve>,
    identity: Option<Identity>,
    /// Every APIService's priorities (local ones too), by group version:
    /// `groupPriorityMinimum` and `versionPriority`, which order discovery.
    priorities: RwLock<Priorities>,
    /// What each remote group version's server last said it serves.
    found: RwLock<BTreeMap<(String, String), APIVersionDiscovery>>,
    /// The paths of each remote group version's server's OpenAPI v3 index.
    indexes: RwLock<BTreeMap<(String, String), serde_json::Map<String, serde_json::Value>>>,
    /// Each remote group version's server's OpenAPI v2 document, kept to
    /// the group version's paths, and a generation that changes with them.
    specs: RwLock<(u64, Specs)>,
    /// Ticks when the remote group versions change.
    changed: tokio::sync::watch::Sender<()>,
}

/// The remote OpenAPI v2 documents by (group, version).
type Specs = BTreeMap<(String, String), Arc<serde_json::Value>>;

/// `groupPriorityMinimum` and `versionPriority` by (group, version).
pub type Priorities = BTreeMap<(String, String), (i64, i64)>;

impl std::fmt::Debug for RemoteApis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteApis").finish_non_exhaustive()
    }
}

/// A resolver for a server that reaches no Service (one without
/// Services, or in tests).
struct NoServices;

#[async_trait::async_trait]
impl Resolve for NoServices {
    async fn resolve(&self, _: &str, name: &str, _: i32) -> Result<(String, u16), String> {
        Err(format!("service \"{name}\" not found"))
    }
}

impl Default for RemoteApis {
    /// No group version served elsewhere, and no Service to reach one at.
    fn default() -> RemoteApis {
        RemoteApis::new(Arc::new(NoServices), None)
    }
}

impl RemoteApis {
    /// No group version served elsewhere yet; Services are found through
    /// `resolver`, and `identity` is the client certificate presented.
    pub fn new(resolver: Arc<dyn Resolve>, identity: Option<Identity>) -> RemoteApis {
        RemoteApis {
            versions: RwLock::new(BTreeMap::new()),
            resolver,
            identity,
            priorities: RwLock::new(BTreeMap::new()),
            found: RwLock::new(BTreeMap::new()),
            indexes: RwLock::new(BTreeMap::new()),
            specs: RwLock::new((0, BTreeMap::new())),
            changed: tokio::sync::watch::channel(()).0,
        }
    }

    /// The priorities of every APIService.
    pub fn set_priorities(&self, priorities: Priorities) {
        let mut current = self
            .priorities
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if *current == priorities {
            return;
        }
        *current = priorities;
        drop(current);
        // The merged OpenAPI document follows the priorities' order.
        self.specs.write().unwrap_or_else(PoisonError::into_inner).0 += 1;
    }

    /// The priorities of every APIService, as last set.
    pub fn priorities(&self) -> Priorities {
        self.priorities
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records what the server of `group`/`version` serves (`None`: it
    /// could not be read).
    fn discovered(&self, group: &str, version: &str, found: Option<APIVersionDiscovery>) {
        let key = (group.to_owned(), version.to_owned());
        let remote = self.remote(group, version).is_some();
        let mut all = self.found.write().unwrap_or_else(PoisonError::into_inner);
        match found {
            // A version served here again since the read began stays out.
            Some(found) if remote => {
                all.insert(key, found);
            }
            Some(_) => {}
            None => {
                all.remove(&key);
            }
        }
    }

    /// Records the OpenAPI v3 index of the server of `group`/`version`.
    fn indexed(
        &self,
        group: &str,
        version: &str,
        paths: serde_json::Map<String, serde_json::Value>,
    ) {
        if self.remote(group, version).is_none() {
            return;
        }
        self.indexes
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((group.to_owned(), version.to_owned()), paths);
    }

    /// Records the OpenAPI v2 document of the server of `group`/`version`
    /// (`None`: it has none), kept to the group version's paths.
    fn specified(&self, group: &str, version: &str, spec: Option<serde_json::Value>) {
        if self.remote(group, version).is_none() {
            return;
        }
        let key = (group.to_owned(), version.to_owned());
        let mut specs = self.specs.write().unwrap_or_else(PoisonError::into_inner);
        let changed = match spec {
            Some(spec) => {
                let prefix = if group.is_empty() {
                    format!("/api/{version}/")
                } else {
                    format!("/apis/{group}/{version}/")
                };
                let kept = crate::openapi::merge::filter_paths(&spec, &prefix);
                let same = specs.1.get(&key).is_some_and(|old| **old == kept);
                if !same {
                    specs.1.insert(key, Arc::new(kept));
                }
                !same
            }
            None => specs.1.remove(&key).is_some(),
        };
        if changed {
            specs.0 += 1;
        }
    }

    /// The remote OpenAPI v2 documents in the order kube-aggregator merges
    /// them: by their group's highest `groupPriorityMinimum`, then by
    /// APIService name.
    pub fn openapi_v2(&self) -> crate::openapi::RemoteV2 {
        let specs = self.specs.read().unwrap_or_else(PoisonError::into_inner);
        if specs.1.is_empty() {
            return crate::openapi::RemoteV2::default();
        }
        let priorities = self.priorities();
        let group_priority = |group: &str| {
            priorities
                .iter()
                .filter(|((g, _), _)| g == group)
                .map(|(_, (gpm, _))| *gpm)
                .max()
                .unwrap_or(0)
        };
        let mut ordered: Vec<(i64, String, Arc<serde_json::Value>)> = specs
            .1
            .iter()
            .filter_map(|((group, version), spec)| {
                let remote = self.remote(group, version)?;
                Some((
                    group_priority(group),
                    remote.apiservice.clone(),
                    spec.clone(),
                ))
            })
            .collect();
        ordered.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        crate::openapi::RemoteV2 {
            documents: ordered.into_iter().map(|(_, _, spec)| spec).collect(),
            generation: specs.0,
        }
    }

    /// The OpenAPI v3 index entry of each remote group version, as its
    /// server lists it (`apis/<group>/<version>` with its
    /// `serverRelativeURL`). Upstream merges every entry of an extension's
    /// index, so that one listing `api/v1` may shadow the server's own at
    /// random; only the APIService's own group version is taken here.
    pub fn openapi_paths(&self) -> serde_json::Map<String, serde_json::Value> {
        let indexes = self.indexes.read().unwrap_or_else(PoisonError::into_inner);
        let mut all = serde_json::Map::new();
        for ((group, version), paths) in indexes.iter() {
            let key = openapi_key(group, version);
            if let Some(entry) = paths.get(&key) {
                all.insert(key, entry.clone());
            }
        }
        all
    }

    /// The remote group version OpenAPI v3 document `key`
    /// (`apis/<group>/<version>`) is the server of, once its server listed it.
    fn openapi_owner(&self, key: &str) -> Option<Arc<RemoteVersion>> {
        let (group, version) = match key.strip_prefix("apis/") {
            Some(rest) => rest.split_once('/')?,
            None => ("", key.strip_prefix("api/")?),
        };
        let listed = self
            .indexes
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(group.to_owned(), version.to_owned()))
            .is_some_and(|paths| paths.contains_key(key));
        if !listed {
            return None;
        }
        self.remote(group, version)
    }

    /// The aggregated discovery of each remote group version: what its
    /// server serves, or the version alone, `Stale`, when that is not known.
    pub fn discovery(&self) -> Vec<((String, String), APIVersionDiscovery)> {
        let found = self.found.read().unwrap_or_else(PoisonError::into_inner);
        self.all()
            .into_iter()
            .map(|(key, _)| {
                let entry = found
                    .get(&key)
                    .cloned()
                    .unwrap_or_else(|| APIVersionDiscovery {
                        version: key.1.clone(),
                        resources: Vec::new(),
                        freshness: Some("Stale".to_owned()),
                    });
                (key, entry)
            })
            .collect()
    }

    /// Where Services are found.
    pub fn resolver(&self) -> &dyn Resolve {
        self.resolver.as_ref()
    }

    /// Where Services are found, shared.
    pub fn resolver_handle(&self) -> Arc<dyn Resolve> {
        self.resolver.clone()
    }

    /// `group`/`version` is served by `service` through APIService
    /// `apiservice`. The transport is kept while the Service and the trust
    /// stay the same, so that a change of availability keeps the open
    /// connections.
    pub fn serve_remote(
        &self,
        group: &str,
        version: &str,
        apiservice: &str,
        service: ServiceTarget,
        trust: Trust,
        available: bool,
    ) {
        let key = (group.to_owned(), version.to_owned());
        let mut versions = self
            .versions
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let transport = match versions.get(&key) {
            Some(old) if old.service == service && old.trust == trust => old.transport.clone(),
            _ => Transport::new(&service.server_name(), &trust, self.identity.as_ref()),
        };
        if let Err(e) = &transport {
            tracing::warn!(%apiservice, error = %e, "no transport to the APIService's server");
        }
        let changed = versions.get(&key).is_none_or(|old| {
            old.service != service || old.trust != trust || old.available != available
        });
        versions.insert(
            key,
            Arc::new(RemoteVersion {
                apiservice: apiservice.to_owned(),
                service,
                trust,
                available,
                transport,
            }),
        );
        drop(versions);
        if changed {
            self.changed.send_replace(());
        }
    }

    /// `group`/`version` is served here (or not at all).
    pub fn serve_locally(&self, group: &str, version: &str) {
        let key = (group.to_owned(), version.to_owned());
        let removed = self
            .versions
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
        if removed.is_some() {
            self.found
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&key);
            self.indexes
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&key);
            let mut specs = self.specs.write().unwrap_or_else(PoisonError::into_inner);
            if specs.1.remove(&key).is_some() {
                specs.0 += 1;
            }
            self.changed.send_replace(());
        }
    }

    /// The server of `group`/`version`, when it is another one.
    pub fn remote(&self, group: &str, version: &str) -> Option<Arc<RemoteVersion>> {
        let versions = self.versions.read().unwrap_or_else(PoisonError::into_inner);
        if versions.is_empty() {
            return None;
        }
        versions
            .get(&(group.to_owned(), version.to_owned()))
            .cloned()
    }

    /// Every group version served elsewhere.
    pub fn all(&self) -> Vec<((String, String), Arc<RemoteVersion>)> {
        self.versions
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// A transport of its own to `service` trusted as `trust`, with this
    /// server's identity (the availability checks use one).
    pub fn transport_to(
        &self,
        service: &ServiceTarget,
        trust: &Trust,
    ) -> Result<Transport, String> {
        Transport::new(&service.server_name(), trust, self.identity.as_ref())
    }
}

/// The key of a group version's OpenAPI v3 document.
fn openapi_key(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// The group and version a path addresses: `/apis/<group>/<version>[/...]`,
/// or `/api/<version>[/...]` for the core group.
fn group_version(path: &str) -> Option<(&str, &str)> {
    let mut parts = path.strip_prefix('/')?.splitn(4, '/');
    match parts.next()? {
        "apis" => {
            let group = parts.next().filter(|g| !g.is_empty())?;
            let version = parts.next().filter(|v| !v.is_empty())?;
            Some((group, version))
        }
        "api" => {
            let version = parts.next().filter(|v| !v.is_empty())?;
            Some(("", version))
        }
        _ => None,
    }
}

/// The filter: a request for a group version served elsewhere is passed
/// on; any other goes to this server's routes.
pub async fn route(State(apis): State<Arc<RemoteApis>>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let remote = match path.strip_prefix("/openapi/v3/") {
        // An OpenAPI document another server lists is its to answer.
        Some(key) => apis.openapi_owner(key.trim_end_matches('/')),
        None => group_version(path).and_then(|(g, v)| apis.remote(g, v)),
    };
    match remote {
        Some(remote) => proxy::serve(&apis, &remote, request).await,
        None => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_their_group_version() {
        assert_eq!(
            group_version("/apis/metrics.k8s.io/v1beta1"),
            Some(("metrics.k8s.io", "v1beta1"))
        );
        assert_eq!(
            group_version("/apis/metrics.k8s.io/v1beta1/namespaces/a/pods"),
            Some(("metrics.k8s.io", "v1beta1"))
        );
        assert_eq!(group_version("/apis/metrics.k8s.io/"), None);
        assert_eq!(group_version("/apis/metrics.k8s.io"), None);
        assert_eq!(group_version("/api/v1/pods"), Some(("", "v1")));
        assert_eq!(group_version("/healthz"), None);
    }
}
