//! Resource names as the core helpers classify them (`IsStandardResourceName`,
//! `IsStandardQuotaResourceName`, `IsIntegerResourceName`, ...) and the
//! checks of names in limit ranges and quotas, with a quantity printed as Go's
//! `%#v` prints a `resource.Quantity`.

use std::fmt;

use kapi_runtime::Quantity;
use kapi_runtime::validation::{FieldErrors, FieldPath, qualified_name_errors};

use crate::validation::{Raw, nonnegative_quantity};

/// Names a resource may have without a domain, besides huge pages.
const STANDARD: [&str; 20] = [
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
    "persistentvolumeclaims",
    "configmaps",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// Names a quota may cap without a domain, besides huge pages.
const STANDARD_QUOTA: [&str; 19] = [
    "pods",
    "memory",
    "cpu",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "persistentvolumeclaims",
    "resourcequotas",
    "services",
    "services.loadbalancers",
    "services.nodeports",
    "secrets",
    "configmaps",
    "replicationcontrollers",
];

/// Object counts a quota can only cap in whole numbers.
const INTEGER: [&str; 9] = [
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

/// The compute resources a pod-scoped quota can cap, besides `pods`.
pub(super) const POD_COMPUTE: [&str; 6] = [
    "cpu",
    "memory",
    "limits.cpu",
    "limits.memory",
    "requests.cpu",
    "requests.memory",
];

pub(crate) fn is_hugepages(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// Huge pages as a quota names them: as such or as requests.
fn is_quota_hugepages(name: &str) -> bool {
    is_hugepages(name) || name.starts_with("requests.hugepages-")
}

/// Native resources have no domain or one under `kubernetes.io`.
pub(crate) fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// A domain-qualified, non-native name a quota can cap as `requests.<name>`.
pub(crate) fn is_extended(name: &str) -> bool {
    !is_native(name)
        && !name.starts_with("requests.")
        && qualified_name_errors(&format!("requests.{name}")).is_empty()
}

/// Requests may differ from limits only for native resources but huge pages.
pub(crate) fn overcommit_allowed(name: &str) -> bool {
    is_native(name) && !is_hugepages(name)
}

/// Whether a quota name is one upstream knows (`IsStandardQuotaResourceName`).
pub(super) fn is_standard_quota(name: &str) -> bool {
    STANDARD_QUOTA.contains(&name) || is_quota_hugepages(name)
}

/// `validateResourceName`: a qualified name, and a standard one when it has
/// no domain (checked only once the name is qualified).
pub(super) fn resource_name(name: &str, path: &FieldPath, errs: &mut FieldErrors) {
    let problems = qualified_name_errors(name);
    for detail in &problems {
        errs.invalid(path.clone(), Raw(name), detail);
    }
    if problems.is_empty()
        && !name.contains('/')
        && !STANDARD.contains(&name)
        && !is_quota_hugepages(name)
    {
        errs.invalid(
            path.clone(),
            Raw(name),
            "must be a standard resource type or fully qualified",
        );
    }
}

/// `validateContainerResourceName`: a resource name that a container (or a
/// pod) may set.
pub(crate) fn container_resource_name(name: &str, path: &FieldPath, errs: &mut FieldErrors) {
    resource_name(name, path, errs);
    if !name.contains('/') {
        if !matches!(name, "cpu" | "memory" | "ephemeral-storage") && !is_hugepages(name) {
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

/// `ValidateResourceQuotaResourceName`.
pub(super) fn quota_resource_name(name: &str, path: &FieldPath, errs: &mut FieldErrors) {
    resource_name(name, path, errs);
    if !name.contains('/') && !is_standard_quota(name) {
        errs.invalid(
            path.clone(),
            Raw(name),
            "must be a standard resource for quota",
        );
    }
}

/// `ValidateResourceQuantityValue`: not negative, and whole for object counts
/// and extended resources.
pub(super) fn quantity_value(
    name: &str,
    quantity: &Quantity,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    nonnegative_quantity(quantity, path, errs);
    let integer = INTEGER.contains(&name) || is_extended(name);
    let whole = kapi_runtime::quantity::nano_value(&quantity.0)
        .is_none_or(|nanos| nanos % 1_000_000_000 == 0);
    if integer && !whole {
        errs.invalid(path.clone(), GoQuantity(quantity), "must be an integer");
    }
}

/// A quantity as Go's `%#v` prints a `resource.Quantity` value: its integer
/// amount and scale, the cached text and the format. The text is the
/// canonical one (Go keeps the client's text when it was canonical already,
/// and an empty one otherwise, which the canonical text here cannot tell).
pub(crate) struct GoQuantity<'a>(pub &'a Quantity);

impl fmt::Debug for GoQuantity<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0.0.as_str();
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || c == '-' || c == '+'))
            .unwrap_or(text.len());
        let (number, suffix) = text.split_at(split);
        let number: i128 = number.parse().unwrap_or(0);
        let (format, scale, binary) = match suffix {
            "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
                let power = "KMGTPE".find(&suffix[..1]).map_or(0, |i| i + 1);
                ("BinarySI", 0, 10 * power as u32)
            }
            "n" => ("DecimalSI", -9, 0),
            "u" => ("DecimalSI", -6, 0),
            "m" => ("DecimalSI", -3, 0),
            "k" => ("DecimalSI", 3, 0),
            "M" => ("DecimalSI", 6, 0),
            "G" => ("DecimalSI", 9, 0),
            "T" => ("DecimalSI", 12, 0),
            "P" => ("DecimalSI", 15, 0),
            "E" => ("DecimalSI", 18, 0),
            "" => ("DecimalSI", 0, 0),
            exp => ("DecimalExponent", exp[1..].parse::<i32>().unwrap_or(0), 0),
        };
        let value = number << binary;
        write!(
            f,
            "resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, \
             d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:{text:?}, Format:\"{format}\"}}"
        )
    }
}
