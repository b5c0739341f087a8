//! The checks of pkg/apis/policy/validation for PodDisruptionBudgets.

use kapi_runtime::IntOrString;
use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::poddisruptionbudget::PodDisruptionBudgetSpec;
use crate::validation::{
    GoIntOrString, GoSelector, Raw, int_or_percent, not_more_than_100_percent,
    validate_label_selector,
};

/// The `PodDisruptionBudgetSpec` hook (`ValidatePodDisruptionBudgetSpec`).
/// Upstream prints the spec with pointer addresses when both bounds are set;
/// we print the values instead.
pub(crate) fn validate_pdb_spec(
    spec: &PodDisruptionBudgetSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if let (Some(min), Some(max)) = (&spec.min_available, &spec.max_unavailable) {
        let selector = spec
            .selector
            .as_ref()
            .map_or("(*v1.LabelSelector)(nil)".to_owned(), |s| {
                format!("&{:?}", GoSelector(s))
            });
        let policy = spec.unhealthy_pod_eviction_policy.as_ref().map_or(
            "(*policy.UnhealthyPodEvictionPolicyType)(nil)".to_owned(),
            |p| format!("&{p:?}"),
        );
        let value = format!(
            "policy.PodDisruptionBudgetSpec{{MinAvailable:&{:?}, Selector:{selector}, \
             MaxUnavailable:&{:?}, UnhealthyPodEvictionPolicy:{policy}}}",
            GoIntOrString(min),
            GoIntOrString(max)
        );
        errs.invalid(
            path.clone(),
            Raw(&value),
            "minAvailable and maxUnavailable cannot be both set",
        );
    }
    let bounds: [(&str, Option<&IntOrString>); 2] = [
        ("minAvailable", spec.min_available.as_ref()),
        ("maxUnavailable", spec.max_unavailable.as_ref()),
    ];
    for (field, value) in bounds {
        if let Some(value) = value {
            int_or_percent(value, &path.child(field), errs);
            not_more_than_100_percent(value, &path.child(field), errs);
        }
    }
    if let Some(selector) = &spec.selector {
        validate_label_selector(selector, &path.child("selector"), errs);
    }
    if let Some(policy) = spec.unhealthy_pod_eviction_policy.as_deref()
        && !matches!(policy, "AlwaysAllow" | "IfHealthyBudget")
    {
        errs.not_supported(
            path.child("unhealthyPodEvictionPolicy"),
            policy,
            &["AlwaysAllow", "IfHealthyBudget"],
        );
    }
}
