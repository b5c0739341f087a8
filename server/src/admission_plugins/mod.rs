//! Kubernetes' built-in admission plugins (k8s.io/kubernetes/plugin/pkg/admission
//! and the namespace lifecycle plugin of k8s.io/apiserver), assembled by
//! [`builtin`] into one [`Chain`] in upstream's order (`AllOrderedPlugins`).
//! The first refusal wins.
//!
//! Each plugin lives in its own module: the type implementing
//! [`Plugin`](crate::admission::Plugin) says which requests it handles and
//! works on the typed object (as upstream's plugins assert `*api.Pod`),
//! matching the kinds it handles by type. It reads the objects it
//! depends on (ServiceAccounts, PriorityClasses, StorageClasses,
//! Namespaces...) through the [`Loopback`](crate::loopback::Loopback), as
//! upstream's plugins read informers.

mod authorizing;
mod default_class;
mod lifecycle;
mod limit_ranger;
mod matching;
pub(crate) mod node_restriction;
mod node_taints;
mod pod_security;
pub mod policy;
mod priority;
mod protection;
mod resource_quota;
mod runtime_class;
mod service_account;
#[cfg(test)]
mod tests;
mod toleration_seconds;
mod update;
pub mod webhook;

use serde_json::Value;

use crate::admission::Chain;
use crate::loopback::Resource;

/// kube-apiserver's plugins that are on by default and that kapi has, in
/// upstream's order, with ResourceQuota as the quota stage.
pub fn builtin() -> Chain {
    Chain::new(
        vec![
            Box::new(lifecycle::NamespaceLifecycle),
            Box::new(limit_ranger::LimitRanger),
            Box::new(service_account::ServiceAccount),
            Box::new(node_restriction::NodeRestriction),
            Box::new(node_taints::TaintNodesByCondition),
            Box::new(pod_security::PodSecurity),
            Box::new(priority::Priority),
            Box::new(toleration_seconds::DefaultTolerationSeconds),
            Box::new(default_class::DefaultStorageClass),
            Box::new(protection::StorageObjectInUseProtection),
            Box::new(update::PersistentVolumeClaimResize),
            Box::new(runtime_class::RuntimeClass),
            Box::new(default_class::DefaultIngressClass),
        ],
        Some(Box::new(resource_quota::ResourceQuota)),
    )
}

/// Admission from outside the server, in upstream's order after every
/// other plugin: the mutating webhooks, ValidatingAdmissionPolicy, the
/// validating webhooks (their metrics in `registry`).
pub fn dynamic(
    registry: &mut prometheus_client::registry::Registry,
    authorizer: std::sync::Arc<crate::authz::Authorizer>,
) -> Vec<Box<dyn crate::admission::Plugin>> {
    let (mutating, validating) = webhook::plugins(registry, authorizer.clone());
    let policy_metrics = policy::PolicyMetrics::default();
    policy_metrics.register(registry);
    vec![
        Box::new(mutating),
        Box::new(policy::ValidatingAdmissionPolicyPlugin::new(
            authorizer,
            policy_metrics,
        )),
        Box::new(validating),
    ]
}

/// The objects admission relies on that every cluster has (the system
/// PriorityClasses), to create once the store is open.
pub fn bootstrap_objects() -> impl Iterator<Item = (Resource<'static>, Value)> {
    priority::system_classes()
}
