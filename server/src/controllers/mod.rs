//! The built-in controllers `kapi serve` runs, as kube-controller-manager runs
//! them beside kube-apiserver: namespace deletion, the `default` service
//! account, the root CA ConfigMap and the garbage collector.
//!
//! They are ordinary API clients inside the process: every read and write is
//! an HTTP request through the server's own router ([`client`]), so they see
//! and do exactly what any other client would. They run only while this
//! process holds the leader lease ([`leader`]), so replicas sharing one store
//! run them once.

pub mod client;
mod clusterrole_aggregation;
mod discovery;
mod garbage_collector;
pub mod informer;
pub mod leader;
mod namespace;
mod per_namespace;
pub mod queue;
mod root_ca;
mod serviceaccount;

use std::fmt;

use axum::Router;
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinSet;

use client::{Client, Resource};

/// One built-in controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuiltIn {
    /// Empties and removes namespaces being deleted.
    Namespace,
    /// Keeps a `default` ServiceAccount in every namespace.
    ServiceAccount,
    /// Keeps the `kube-root-ca.crt` ConfigMap in every namespace.
    RootCaPublisher,
    /// Cascades deletion along ownerReferences.
    GarbageCollector,
    /// Fills aggregated ClusterRoles with the rules of the roles they pick.
    ClusterRoleAggregation,
}

impl BuiltIn {
    /// Every built-in controller; all are on by default.
    pub const ALL: [BuiltIn; 5] = [
        BuiltIn::Namespace,
        BuiltIn::ServiceAccount,
        BuiltIn::RootCaPublisher,
        BuiltIn::GarbageCollector,
        BuiltIn::ClusterRoleAggregation,
    ];

    /// kube-controller-manager's name of the controller.
    pub fn name(self) -> &'static str {
        match self {
            BuiltIn::Namespace => "namespace-controller",
            BuiltIn::ServiceAccount => "serviceaccount-controller",
            BuiltIn::RootCaPublisher => "root-ca-certificate-publisher-controller",
            BuiltIn::GarbageCollector => "garbage-collector-controller",
            BuiltIn::ClusterRoleAggregation => "clusterrole-aggregation-controller",
        }
    }

    /// The service account kube-controller-manager's controller acts as with
    /// `--use-service-account-credentials`.
    pub fn service_account(self) -> &'static str {
        match self {
            BuiltIn::Namespace => "namespace-controller",
            BuiltIn::ServiceAccount => "service-account-controller",
            BuiltIn::RootCaPublisher => "root-ca-cert-publisher",
            BuiltIn::GarbageCollector => "generic-garbage-collector",
            BuiltIn::ClusterRoleAggregation => "clusterrole-aggregation-controller",
        }
    }

    /// The short name kube-controller-manager also accepts (its alias).
    pub fn alias(self) -> &'static str {
        match self {
            BuiltIn::Namespace => "namespace",
            BuiltIn::ServiceAccount => "serviceaccount",
            BuiltIn::RootCaPublisher => "root-ca-cert-publisher",
            BuiltIn::GarbageCollector => "garbagecollector",
            BuiltIn::ClusterRoleAggregation => "clusterrole-aggregation",
        }
    }

    fn named(name: &str) -> Option<BuiltIn> {
        // The names the brief of this project used, beside upstream's.
        let extra = |c: BuiltIn| match c {
            BuiltIn::RootCaPublisher => "root-ca-certificate-publisher",
            BuiltIn::GarbageCollector => "garbage-collector",
            other => other.alias(),
        };
        BuiltIn::ALL
            .into_iter()
            .find(|c| c.name() == name || c.alias() == name || extra(*c) == name)
    }
}

impl fmt::Display for BuiltIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown name in `--controllers`.
#[derive(Debug, thiserror::Error)]
#[error(
    "--controllers: {0:?} is not in the list of known controllers (known: {known})",
    known = BuiltIn::ALL.map(BuiltIn::name).join(", ")
)]
pub struct UnknownController(pub String);

/// Which controllers run, from `--controllers` with kube-controller-manager's
/// rules: `*` enables every on-by-default controller, `foo` enables `foo`,
/// `-foo` disables it; the first entry naming a controller decides; without
/// `*`, only the ones named run (so `-*` or an empty list runs none).
pub fn select(entries: &[String]) -> Result<Vec<BuiltIn>, UnknownController> {
    Ok(select_with(entries, &[])?.0)
}

/// [`select`] over the built-in controllers and `added`, the controllers a
/// server binary adds (named by [`Controller::name`]): the built-in ones
/// enabled, and the indexes in `added` of the added ones enabled.
pub fn select_with(
    entries: &[String],
    added: &[&str],
) -> Result<(Vec<BuiltIn>, Vec<usize>), UnknownController> {
    // A controller is a built-in one or the index of an added one.
    let find = |name: &str| match BuiltIn::named(name) {
        Some(builtin) => Some(Ok(builtin)),
        None => added.iter().position(|a| *a == name).map(Err),
    };
    let mut decisions: Vec<(Result<BuiltIn, usize>, bool)> = Vec::new();
    let mut star = false;
    for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
        match entry {
            "*" => star = true,
            "-*" => {}
            _ => {
                let (enable, name) = match entry.strip_prefix('-') {
                    Some(name) => (false, name),
                    None => (true, entry),
                };
                let controller = find(name).ok_or_else(|| UnknownController(entry.to_owned()))?;
                if !decisions.iter().any(|(c, _)| *c == controller) {
                    decisions.push((controller, enable));
                }
            }
        }
    }
    let enabled = |c: Result<BuiltIn, usize>| match decisions.iter().find(|(d, _)| *d == c) {
        Some((_, enable)) => *enable,
        None => star,
    };
    let builtins = BuiltIn::ALL
        .into_iter()
        .filter(|c| enabled(Ok(*c)))
        .collect();
    let added = (0..added.len()).filter(|i| enabled(Err(*i))).collect();
    Ok((builtins, added))
}

/// A controller a server binary adds beside the built-in ones
/// (`crate::extensions::Extensions::controller`). It runs while this server
/// holds the controllers' lease, as an ordinary API client of the server
/// itself with the loopback identity (`system:apiserver`: trusted code in
/// the server's own process), and `--controllers` enables or disables it by
/// its name like the built-in ones (`*` includes it).
#[async_trait::async_trait]
pub trait Controller: Send + Sync {
    /// Its name, in `--controllers` and in the logs.
    fn name(&self) -> &'static str;

    /// Works until done; its task is stopped when the server stops leading
    /// or shuts down.
    async fn run(&self, client: Client);
}

/// What the controllers need besides the router.
#[derive(Clone)]
pub struct ControllerOptions {
    /// The built-in controllers to run.
    pub enabled: Vec<BuiltIn>,
    /// The CA certificate (PEM) the root CA publisher publishes.
    pub root_ca: String,
    /// The controllers the server binary added, enabled.
    pub added: Vec<std::sync::Arc<dyn Controller>>,
}

impl fmt::Debug for ControllerOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let added: Vec<&str> = self.added.iter().map(|c| c.name()).collect();
        f.debug_struct("ControllerOptions")
            .field("enabled", &self.enabled)
            .field("added", &added)
            .finish_non_exhaustive()
    }
}

/// Campaigns for the leader lease and runs the enabled controllers while
/// leading, until `shutdown` flips to `true`.
pub async fn run(router: Router, options: ControllerOptions, shutdown: watch::Receiver<bool>) {
    if options.enabled.is_empty() && options.added.is_empty() {
        return;
    }
    // The lease is the server's own (kapi-controller-manager, beside any
    // real kube-controller-manager's), taken with the server's identity;
    // each controller then acts as its own service account.
    let elector = leader::Elector::new(Client::of_apiserver(router.clone()), leader::identity());
    let client = Client::new(router);
    elector.run(shutdown, || start(&client, &options)).await;
}

fn start(client: &Client, options: &ControllerOptions) -> JoinSet<()> {
    let mut tasks = JoinSet::new();
    for controller in &options.enabled {
        let client = client.as_service_account(controller.service_account());
        match controller {
            BuiltIn::Namespace => tasks.spawn(namespace::run(client)),
            BuiltIn::ServiceAccount => tasks.spawn(per_namespace::run(
                client,
                serviceaccount::DefaultServiceAccount,
            )),
            BuiltIn::RootCaPublisher => tasks.spawn(per_namespace::run(
                client,
                root_ca::RootCaPublisher {
                    ca_pem: options.root_ca.clone(),
                },
            )),
            BuiltIn::GarbageCollector => tasks.spawn(garbage_collector::run(client)),
            BuiltIn::ClusterRoleAggregation => tasks.spawn(clusterrole_aggregation::run(client)),
        };
        tracing::info!(%controller, "started controller");
    }
    for controller in &options.added {
        let (controller, client) = (controller.clone(), client.as_apiserver());
        let name = controller.name();
        tasks.spawn(async move { controller.run(client).await });
        tracing::info!(controller = name, "started controller");
    }
    tasks
}

fn namespaces() -> Resource {
    Resource::new("", "v1", "namespaces", false)
}

/// A namespace being deleted: a deletionTimestamp, or the phase Terminating.
fn is_terminating(namespace: &Value) -> bool {
    !namespace["metadata"]["deletionTimestamp"].is_null()
        || namespace["status"]["phase"] == "Terminating"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Result<Vec<BuiltIn>, UnknownController> {
        select(&list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn controllers_flag_follows_kube_controller_manager() {
        assert_eq!(names(&["*"]).unwrap(), BuiltIn::ALL.to_vec());
        assert!(names(&["-*"]).unwrap().is_empty());
        assert!(names(&[]).unwrap().is_empty());
        assert_eq!(
            names(&["*", "-garbage-collector-controller"]).unwrap(),
            vec![
                BuiltIn::Namespace,
                BuiltIn::ServiceAccount,
                BuiltIn::RootCaPublisher,
                BuiltIn::ClusterRoleAggregation,
            ]
        );
        assert_eq!(names(&["namespace"]).unwrap(), vec![BuiltIn::Namespace]);
        assert_eq!(names(&["-namespace", "namespace", "*"]).unwrap().len(), 4);
        assert!(names(&["bogus"]).is_err());
    }
}
