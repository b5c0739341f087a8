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
pub enum Controller {
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

impl Controller {
    /// Every built-in controller; all are on by default.
    pub const ALL: [Controller; 5] = [
        Controller::Namespace,
        Controller::ServiceAccount,
        Controller::RootCaPublisher,
        Controller::GarbageCollector,
        Controller::ClusterRoleAggregation,
    ];

    /// kube-controller-manager's name of the controller.
    pub fn name(self) -> &'static str {
        match self {
            Controller::Namespace => "namespace-controller",
            Controller::ServiceAccount => "serviceaccount-controller",
            Controller::RootCaPublisher => "root-ca-certificate-publisher-controller",
            Controller::GarbageCollector => "garbage-collector-controller",
            Controller::ClusterRoleAggregation => "clusterrole-aggregation-controller",
        }
    }

    /// The service account kube-controller-manager's controller acts as with
    /// `--use-service-account-credentials`.
    pub fn service_account(self) -> &'static str {
        match self {
            Controller::Namespace => "namespace-controller",
            Controller::ServiceAccount => "service-account-controller",
            Controller::RootCaPublisher => "root-ca-cert-publisher",
            Controller::GarbageCollector => "generic-garbage-collector",
            Controller::ClusterRoleAggregation => "clusterrole-aggregation-controller",
        }
    }

    /// The short name kube-controller-manager also accepts (its alias).
    pub fn alias(self) -> &'static str {
        match self {
            Controller::Namespace => "namespace",
            Controller::ServiceAccount => "serviceaccount",
            Controller::RootCaPublisher => "root-ca-cert-publisher",
            Controller::GarbageCollector => "garbagecollector",
            Controller::ClusterRoleAggregation => "clusterrole-aggregation",
        }
    }

    fn named(name: &str) -> Option<Controller> {
        // The names the brief of this project used, beside upstream's.
        let extra = |c: Controller| match c {
            Controller::RootCaPublisher => "root-ca-certificate-publisher",
            Controller::GarbageCollector => "garbage-collector",
            other => other.alias(),
        };
        Controller::ALL
            .into_iter()
            .find(|c| c.name() == name || c.alias() == name || extra(*c) == name)
    }
}

impl fmt::Display for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown name in `--controllers`.
#[derive(Debug, thiserror::Error)]
#[error(
    "--controllers: {0:?} is not in the list of known controllers (known: {known})",
    known = Controller::ALL.map(Controller::name).join(", ")
)]
pub struct UnknownController(pub String);

/// Which controllers run, from `--controllers` with kube-controller-manager's
/// rules: `*` enables every on-by-default controller, `foo` enables `foo`,
/// `-foo` disables it; the first entry naming a controller decides; without
/// `*`, only the ones named run (so `-*` or an empty list runs none).
pub fn select(entries: &[String]) -> Result<Vec<Controller>, UnknownController> {
    let mut decisions: Vec<(Controller, bool)> = Vec::new();
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
                let controller =
                    Controller::named(name).ok_or_else(|| UnknownController(entry.to_owned()))?;
                if !decisions.iter().any(|(c, _)| *c == controller) {
                    decisions.push((controller, enable));
                }
            }
        }
    }
    Ok(Controller::ALL
        .into_iter()
        .filter(|c| match decisions.iter().find(|(d, _)| d == c) {
            Some((_, enable)) => *enable,
            None => star,
        })
        .collect())
}

/// What the controllers need besides the router.
#[derive(Clone, Debug)]
pub struct ControllerOptions {
    /// The controllers to run.
    pub enabled: Vec<Controller>,
    /// The CA certificate (PEM) the root CA publisher publishes.
    pub root_ca: String,
}

/// Campaigns for the leader lease and runs the enabled controllers while
/// leading, until `shutdown` flips to `true`.
pub async fn run(router: Router, options: ControllerOptions, shutdown: watch::Receiver<bool>) {
    if options.enabled.is_empty() {
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
            Controller::Namespace => tasks.spawn(namespace::run(client)),
            Controller::ServiceAccount => tasks.spawn(per_namespace::run(
                client,
                serviceaccount::DefaultServiceAccount,
            )),
            Controller::RootCaPublisher => tasks.spawn(per_namespace::run(
                client,
                root_ca::RootCaPublisher {
                    ca_pem: options.root_ca.clone(),
                },
            )),
            Controller::GarbageCollector => tasks.spawn(garbage_collector::run(client)),
            Controller::ClusterRoleAggregation => tasks.spawn(clusterrole_aggregation::run(client)),
        };
        tracing::info!(%controller, "started controller");
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

    fn names(list: &[&str]) -> Result<Vec<Controller>, UnknownController> {
        select(&list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn controllers_flag_follows_kube_controller_manager() {
        assert_eq!(names(&["*"]).unwrap(), Controller::ALL.to_vec());
        assert!(names(&["-*"]).unwrap().is_empty());
        assert!(names(&[]).unwrap().is_empty());
        assert_eq!(
            names(&["*", "-garbage-collector-controller"]).unwrap(),
            vec![
                Controller::Namespace,
                Controller::ServiceAccount,
                Controller::RootCaPublisher,
                Controller::ClusterRoleAggregation,
            ]
        );
        assert_eq!(names(&["namespace"]).unwrap(), vec![Controller::Namespace]);
        assert_eq!(names(&["-namespace", "namespace", "*"]).unwrap().len(), 4);
        assert!(names(&["bogus"]).is_err());
    }
}
