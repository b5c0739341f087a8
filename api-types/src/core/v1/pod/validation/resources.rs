//! `ValidateResourceRequirements` of a container: resource names, non-negative
//! quantities, and requests within limits.

use std::collections::BTreeMap;

use kapi_runtime::Quantity;
use kapi_runtime::validation::{FieldErrors, FieldPath};

use crate::core::v1::pod::container::ResourceRequirements;
use crate::core::v1::validation::resource_names::{
    container_resource_name, is_extended, is_hugepages, overcommit_allowed,
};
use crate::validation::{Raw, nonnegative_quantity, quantity_value};

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
