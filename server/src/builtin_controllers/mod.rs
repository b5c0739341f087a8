//! Kubernetes' own controllers, as kube-controller-manager runs them beside
//! kube-apiserver: namespace deletion, the `default` service account, the
//! root CA ConfigMap, the garbage collector, the aggregation of
//! ClusterRoles and the type checking of ValidatingAdmissionPolicies. Each is a `crate::controllers::Controller`, acting as its
//! upstream service account; `--controllers` picks them by upstream's names
//! ([`select_with`]).

mod clusterrole_aggregation;
mod garbage_collector;
mod namespace;
mod per_namespace;
mod policy_status;
mod root_ca;
mod serviceaccount;

use std::fmt;
use std::sync::Arc;

use kapi_api_types::core::v1::Namespace;

use crate::controllers::Controller;
use crate::controllers::client::{Client, Resource};

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
    /// Type-checks ValidatingAdmissionPolicies into their status.
    PolicyStatus,
}

impl BuiltIn {
    /// Every built-in controller; all are on by default.
    pub const ALL: [BuiltIn; 6] = [
        BuiltIn::Namespace,
        BuiltIn::ServiceAccount,
        BuiltIn::RootCaPublisher,
        BuiltIn::GarbageCollector,
        BuiltIn::ClusterRoleAggregation,
        BuiltIn::PolicyStatus,
    ];

    /// kube-controller-manager's name of the controller.
    pub fn name(self) -> &'static str {
        match self {
            BuiltIn::Namespace => "namespace-controller",
            BuiltIn::ServiceAccount => "serviceaccount-controller",
            BuiltIn::RootCaPublisher => "root-ca-certificate-publisher-controller",
            BuiltIn::GarbageCollector => "garbage-collector-controller",
            BuiltIn::ClusterRoleAggregation => "clusterrole-aggregation-controller",
            BuiltIn::PolicyStatus => "validatingadmissionpolicy-status-controller",
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
            BuiltIn::PolicyStatus => "validatingadmissionpolicy-status-controller",
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
            // Registered after kube-controller-manager stopped giving
            // aliases: its name only.
            BuiltIn::PolicyStatus => "validatingadmissionpolicy-status-controller",
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
/// server binary adds (named by `Controller::name`): the built-in ones
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

/// The enabled built-in controllers as the controllers the server runs;
/// `root_ca` is the CA certificate (PEM) the root CA publisher publishes.
pub fn controllers(enabled: &[BuiltIn], root_ca: &str) -> Vec<Arc<dyn Controller>> {
    enabled
        .iter()
        .map(|&which| -> Arc<dyn Controller> {
            Arc::new(Running {
                which,
                root_ca: root_ca.to_owned(),
            })
        })
        .collect()
}

/// A built-in controller, ready to run.
struct Running {
    which: BuiltIn,
    root_ca: String,
}

#[async_trait::async_trait]
impl Controller for Running {
    fn name(&self) -> &'static str {
        self.which.name()
    }

    fn service_account(&self) -> Option<&'static str> {
        Some(self.which.service_account())
    }

    async fn run(&self, client: Client) {
        match self.which {
            BuiltIn::Namespace => namespace::run(client).await,
            BuiltIn::ServiceAccount => {
                per_namespace::run(client, serviceaccount::DefaultServiceAccount).await
            }
            BuiltIn::RootCaPublisher => {
                per_namespace::run(
                    client,
                    root_ca::RootCaPublisher {
                        ca_pem: self.root_ca.clone(),
                    },
                )
                .await
            }
            BuiltIn::GarbageCollector => garbage_collector::run(client).await,
            BuiltIn::ClusterRoleAggregation => clusterrole_aggregation::run(client).await,
            BuiltIn::PolicyStatus => policy_status::run(client).await,
        }
    }
}

fn namespaces() -> Resource {
    Resource::new("", "v1", "namespaces", false)
}

/// A namespace being deleted: a deletionTimestamp, or the phase Terminating.
fn is_terminating(namespace: &Namespace) -> bool {
    namespace.metadata.deletion_timestamp.is_some()
        || namespace.status.phase.as_deref() == Some("Terminating")
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
                BuiltIn::PolicyStatus,
            ]
        );
        assert_eq!(names(&["namespace"]).unwrap(), vec![BuiltIn::Namespace]);
        assert_eq!(names(&["-namespace", "namespace", "*"]).unwrap().len(), 5);
        assert!(names(&["bogus"]).is_err());
    }
}
