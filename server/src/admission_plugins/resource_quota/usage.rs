//! What a new object uses of a quota (upstream's evaluators: pods with their
//! requests and limits, claims, services, object counts) and which quotas it
//! falls under (scopes and scope selectors).

use std::collections::BTreeMap;

use kapi_api_types::core::v1::pod::affinity::PodAffinityTerm;
use kapi_api_types::core::v1::{PersistentVolumeClaim, Pod, ResourceQuota, Service};

use super::super::limit_ranger::{Amount, Usage};
use crate::body::Object;
use crate::scope::Scope;

/// Whether a quota constrains this create: it has a status, and its scopes
/// (all of them) match the object (`pod`; scoped quotas count only pods).
pub(super) fn evaluated(quota: &ResourceQuota, pod: Option<&Pod>) -> bool {
    let has_hard = quota.status.hard.as_ref().is_some_and(|h| !h.is_empty());
    let spec = &quota.spec;
    let scopes = spec.scopes.iter().flatten();
    let selected = spec
        .scope_selector
        .iter()
        .flat_map(|s| s.match_expressions.iter().flatten());
    let mut requirements = scopes
        .map(|scope| (scope.as_str(), "Exists", &[][..]))
        .chain(selected.map(|r| {
            let values = r.values.as_deref().unwrap_or_default();
            (r.scope_name.as_str(), r.operator.as_str(), values)
        }))
        .peekable();
    if requirements.peek().is_none() {
        return has_hard;
    }
    let Some(pod) = pod else {
        return false;
    };
    has_hard
        && requirements.all(|(scope, operator, values)| matches_scope(pod, scope, operator, values))
}

/// Whether a pod matches one scope requirement.
fn matches_scope(pod: &Pod, scope: &str, operator: &str, values: &[String]) -> bool {
    let spec = &pod.spec;
    let terminating = spec.active_deadline_seconds.is_some_and(|s| s >= 0);
    let best_effort = pod.status.qos_class.as_deref() == Some("BestEffort");
    match scope {
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        "BestEffort" => best_effort,
        "NotBestEffort" => !best_effort,
        // A pod affinity or anti-affinity term that reaches other namespaces.
        "CrossNamespacePodAffinity" => spec.affinity.as_deref().is_some_and(|affinity| {
            let pod_affinity = affinity.pod_affinity.as_ref().map(|a| {
                (
                    &a.required_during_scheduling_ignored_during_execution,
                    &a.preferred_during_scheduling_ignored_during_execution,
                )
            });
            let anti_affinity = affinity.pod_anti_affinity.as_ref().map(|a| {
                (
                    &a.required_during_scheduling_ignored_during_execution,
                    &a.preferred_during_scheduling_ignored_during_execution,
                )
            });
            pod_affinity
                .into_iter()
                .chain(anti_affinity)
                .any(|(required, preferred)| {
                    let preferred = preferred.iter().flatten().map(|w| &w.pod_affinity_term);
                    required
                        .iter()
                        .flatten()
                        .chain(preferred)
                        .any(reaches_other_namespaces)
                })
        }),
        "PriorityClass" => {
            let class = spec.priority_class_name.as_deref().unwrap_or_default();
            let listed = values.iter().any(|v| v == class);
            match operator {
                "In" => listed,
                "NotIn" => !listed,
                "Exists" => !class.is_empty(),
                "DoesNotExist" => class.is_empty(),
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether an affinity term selects pods of other namespaces.
fn reaches_other_namespaces(term: &PodAffinityTerm) -> bool {
    term.namespaces.as_ref().is_some_and(|n| !n.is_empty()) || term.namespace_selector.is_some()
}

/// The usage a new object adds, by resource name.
pub(super) fn usage_of(scope: Scope<'_>, object: &Object) -> BTreeMap<String, Amount> {
    let info = scope.info();
    let one = || Amount::from_milli(1000, false);
    let mut usage = BTreeMap::new();
    let count = if info.group.is_empty() {
        format!("count/{}", info.plural)
    } else {
        format!("count/{}.{}", info.plural, info.group)
    };
    usage.insert(count, one());
    if let Some(pod) = object.downcast_ref::<Pod>() {
        usage.insert("pods".to_owned(), one());
        let pod = Usage::of_pod(&pod.spec);
        for resource in ["cpu", "memory", "ephemeral-storage"] {
            if let Some(request) = pod.requests.get(resource) {
                usage.insert(resource.to_owned(), request.clone());
                usage.insert(format!("requests.{resource}"), request.clone());
            }
            if let Some(limit) = pod.limits.get(resource) {
                usage.insert(format!("limits.{resource}"), limit.clone());
            }
        }
        // Huge pages count under their name and as requests; extended
        // resources (`example.com/dongle`) only as `requests.<name>`, the
        // one form a quota may name them in (upstream's PodUsageFunc).
        for (resource, request) in &pod.requests {
            if resource.starts_with("hugepages-") {
                usage.insert(resource.clone(), request.clone());
                usage.insert(format!("requests.{resource}"), request.clone());
            } else if is_extended_resource(resource) {
                usage.insert(format!("requests.{resource}"), request.clone());
            }
        }
    } else if let Some(claim) = object.downcast_ref::<PersistentVolumeClaim>() {
        usage.insert("persistentvolumeclaims".to_owned(), one());
        let class = claim.spec.storage_class_name.as_deref().unwrap_or_default();
        let prefix = format!("{class}.storageclass.storage.k8s.io/");
        if !class.is_empty() {
            usage.insert(format!("{prefix}persistentvolumeclaims"), one());
        }
        let requests = claim.spec.resources.requests.as_ref();
        let storage = requests.and_then(|r| r.get("storage"));
        if let Some(storage) = storage.and_then(|s| Amount::of_text(&s.0)) {
            if !class.is_empty() {
                usage.insert(format!("{prefix}requests.storage"), storage.clone());
            }
            usage.insert("requests.storage".to_owned(), storage);
        }
    } else if let Some(service) = object.downcast_ref::<Service>() {
        usage.insert("services".to_owned(), one());
        let kind = service.spec.type_.as_deref().unwrap_or_default();
        let ports = service.spec.ports.as_ref().map_or(0, Vec::len) as i128;
        let node_ports = match kind {
            "NodePort" | "LoadBalancer" => ports,
            _ => 0,
        };
        let balancers = i128::from(kind == "LoadBalancer");
        usage.insert(
            "services.nodeports".to_owned(),
            Amount::from_milli(node_ports * 1000, false),
        );
        usage.insert(
            "services.loadbalancers".to_owned(),
            Amount::from_milli(balancers * 1000, false),
        );
    } else if info.group.is_empty()
        && matches!(
            info.plural,
            "configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas"
        )
    {
        // The object counts of the core kinds quotas knew before `count/`.
        usage.insert(info.plural.to_owned(), one());
    }
    usage
}

/// Whether a resource name is an extended resource (upstream's
/// IsExtendedResourceName): a domain-prefixed name outside `kubernetes.io`,
/// not itself a `requests.` name.
fn is_extended_resource(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    !native && !name.starts_with("requests.")
}
