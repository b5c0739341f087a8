//! What a new object uses of a quota (upstream's evaluators: pods with their
//! requests and limits, claims, services, object counts) and which quotas it
//! falls under (scopes and scope selectors).

use std::collections::BTreeMap;

use serde_json::Value;

use super::super::limit_ranger::{Amount, Usage};
use crate::scope::Scope;

/// Whether a quota constrains this create: it has a status, and its scopes
/// (all of them) match the object (`pod`; scoped quotas count only pods).
pub(super) fn evaluated(quota: &Value, pod: Option<&Value>) -> bool {
    let has_hard = quota["status"]["hard"]
        .as_object()
        .is_some_and(|h| !h.is_empty());
    let scopes = quota["spec"]["scopes"].as_array().into_iter().flatten();
    let selected = quota["spec"]["scopeSelector"]["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten();
    let mut requirements = scopes
        .map(|scope| (scope.as_str().unwrap_or_default(), "Exists", &Value::Null))
        .chain(selected.map(|r| {
            let text = |key: &str| r[key].as_str().unwrap_or_default();
            (text("scopeName"), text("operator"), &r["values"])
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
fn matches_scope(pod: &Value, scope: &str, operator: &str, values: &Value) -> bool {
    let spec = &pod["spec"];
    let terminating = spec["activeDeadlineSeconds"]
        .as_i64()
        .is_some_and(|s| s >= 0);
    let best_effort = pod["status"]["qosClass"] == "BestEffort";
    match scope {
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        "BestEffort" => best_effort,
        "NotBestEffort" => !best_effort,
        // A pod affinity or anti-affinity term that reaches other namespaces.
        "CrossNamespacePodAffinity" => ["podAffinity", "podAntiAffinity"].iter().any(|kind| {
            let affinity = &spec["affinity"][kind];
            let required = affinity["requiredDuringSchedulingIgnoredDuringExecution"]
                .as_array()
                .into_iter()
                .flatten();
            let preferred = affinity["preferredDuringSchedulingIgnoredDuringExecution"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|weighted| &weighted["podAffinityTerm"]);
            required.chain(preferred).any(|term| {
                term["namespaces"].as_array().is_some_and(|n| !n.is_empty())
                    || term["namespaceSelector"].is_object()
            })
        }),
        "PriorityClass" => {
            let class = spec["priorityClassName"].as_str().unwrap_or_default();
            let listed = values
                .as_array()
                .is_some_and(|values| values.iter().any(|v| v == class));
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

/// The usage a new object adds, by resource name.
pub(super) fn usage_of(scope: Scope<'_>, object: &Value) -> BTreeMap<String, Amount> {
    let info = scope.info();
    let one = || Amount::from_milli(1000, false);
    let mut usage = BTreeMap::new();
    let count = if info.group.is_empty() {
        format!("count/{}", info.plural)
    } else {
        format!("count/{}.{}", info.plural, info.group)
    };
    usage.insert(count, one());
    match (info.group, info.plural) {
        ("", "pods") => {
            usage.insert("pods".to_owned(), one());
            let pod = Usage::of_pod(&object["spec"]);
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
        }
        ("", "persistentvolumeclaims") => {
            usage.insert("persistentvolumeclaims".to_owned(), one());
            let class = object["spec"]["storageClassName"]
                .as_str()
                .unwrap_or_default();
            let prefix = format!("{class}.storageclass.storage.k8s.io/");
            if !class.is_empty() {
                usage.insert(format!("{prefix}persistentvolumeclaims"), one());
            }
            let storage = &object["spec"]["resources"]["requests"]["storage"];
            if let Some(storage) = Amount::parse(storage) {
                if !class.is_empty() {
                    usage.insert(format!("{prefix}requests.storage"), storage.clone());
                }
                usage.insert("requests.storage".to_owned(), storage);
            }
        }
        ("", "services") => {
            usage.insert("services".to_owned(), one());
            let kind = object["spec"]["type"].as_str().unwrap_or_default();
            let ports = object["spec"]["ports"].as_array().map_or(0, Vec::len) as i128;
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
        }
        ("", legacy @ ("configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas")) => {
            usage.insert(legacy.to_owned(), one());
        }
        _ => {}
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
