//! `ValidateResourceRequirements` of a container: resource names, non-negative
//! quantities, and requests within limits.

use std::collections::BTreeMap;

use kapi_runtime::Quantity;
use kapi_runtime::validation::{FieldErrors, FieldPath, qualified_name_errors};

use crate::core::v1::pod::container::ResourceRequirements;
use crate::validation::{Raw, nonnegative_quantity, quantity_value};

/// Resources a container may name without a domain.
const STANDARD_CONTAINER_RESOURCES: [&str; 3] = ["cpu", "memory", "ephemeral-storage"];

fn is_hugepages(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// Native resources are those without a domain or in `kubernetes.io`.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// A domain-qualified, non-native name usable in a quota as `requests.<name>`.
fn is_extended(name: &str) -> bool {
    !is_native(name)
        && !name.starts_with("requests.")
        && qualified_name_errors(&format!("requests.{name}")).is_empty()
}

/// Requests may stay below limits only for native resources other than huge
/// pages.
fn overcommit_allowed(name: &str) -> bool {
    is_native(name) && !is_hugepages(name)
}

/// Names a resource may have without a domain (`IsStandardResourceName`,
/// besides huge pages): the compute resources, as such and as quota
/// requests and limits, and the object counts and storage of quotas.
const STANDARD_RESOURCES: [&str; 20] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// `validateContainerResourceName`, after `ValidateResourceName`: a
/// qualified name, a standard one when it has no domain.
pub(crate) fn container_resource_name(name: &str, path: &FieldPath, errs: &mut FieldErrors) {
    for detail in qualified_name_errors(name) {
        errs.invalid(path.clone(), Raw(name), &detail);
    }
    let quota_hugepages = name.strip_prefix("requests.").unwrap_or(name);
    if !name.contains('/') && !STANDARD_RESOURCES.contains(&name) && !is_hugepages(quota_hugepages)
    {
        errs.invalid(
            path.clone(),
            Raw(name),
            "must be a standard resource type or fully qualified",
        );
    }
    if !name.contains('/') {
        if !STANDARD_CONTAINER_RESOURCES.contains(&name) && !is_hugepages(name) {
            errs.invalid(
                path.clone(),
                Raw(name),
                "must be a standard resource for containers",
            );
        }
    } else if !is_native(name) && !is_extended(name) {
        errs.invalid(
            path.clone(),
            Raw(name),
            "doesn't follow extended resource name standard",
        );
    }
}

/// `ValidateResourceQuantityValue`: non-negative, whole for extended resources.
fn resource_quantity(name: &str, quantity: &Quantity, path: &FieldPath, errs: &mut FieldErrors) {
    nonnegative_quantity(quantity, path, errs);
    if is_extended(name) && quantity_value(quantity).is_some_and(|v| v.fract() != 0.0) {
        errs.invalid(path.clone(), Raw(&quantity.0), "must be an integer");
    }
}

/// The `ResourceRequirements` hook: names and quantities of both maps, each
/// request at most its limit (equal to it where overcommit is not allowed),
/// and huge pages only beside cpu or memory.
pub(crate) fn validate_resources(
    resources: &ResourceRequirements,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let empty = BTreeMap::new();
    let limits = resources.limits.as_ref().unwrap_or(&empty);
    let requests = resources.requests.as_ref().unwrap_or(&empty);
    let limits_path = path.child("limits");
    let requests_path = path.child("requests");
    for (name, quantity) in limits {
        let entry = limits_path.key(name);
        container_resource_name(name, &entry, errs);
        resource_quantity(name, quantity, &entry, errs);
    }
    for (name, quantity) in requests {
        let entry = requests_path.key(name);
        container_resource_name(name, &entry, errs);
        resource_quantity(name, quantity, &entry, errs);
        match limits.get(name) {
            Some(limit) => {
                let (req, lim) = (quantity_value(quantity), quantity_value(limit));
                if req != lim && !overcommit_allowed(name) {
                    let detail = format!("must be equal to {name} limit of {}", limit.0);
                    errs.invalid(requests_path.clone(), quantity.0.as_str(), &detail);
                } else if let (Some(req), Some(lim)) = (req, lim)
                    && req > lim
                {
                    let detail =
                        format!("must be less than or equal to {name} limit of {}", limit.0);
                    errs.invalid(requests_path.clone(), quantity.0.as_str(), &detail);
                }
            }
            None if !overcommit_allowed(name) => errs.required(
                limits_path.clone(),
                "Limit must be set for non overcommitable resources",
            ),
            None => {}
        }
    }
    let compute =
        |m: &BTreeMap<String, Quantity>| m.contains_key("cpu") || m.contains_key("memory");
    let hugepages = |m: &BTreeMap<String, Quantity>| m.keys().any(|k| is_hugepages(k));
    if !compute(limits) && !compute(requests) && (hugepages(limits) || hugepages(requests)) {
        errs.forbidden(path.clone(), "HugePages require cpu or memory");
    }
}
