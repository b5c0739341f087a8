//! The checks of pkg/apis/scheduling/validation for PriorityClasses.

use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::priorityclass::PriorityClass;
use crate::validation::Raw;

/// The highest priority a class not named `system-` may have.
const HIGHEST_USER_PRIORITY: i32 = 1_000_000_000;

/// The `PriorityClass` hook: user classes stay below the system range, the
/// preemption policy is known. (The reserved `system-` names are not checked.)
pub(crate) fn validate_priority_class(
    pc: &PriorityClass,
    _path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let name = pc.metadata.name.as_deref().unwrap_or_default();
    if !name.starts_with("system-") && pc.value > HIGHEST_USER_PRIORITY {
        errs.forbidden(
            FieldPath::new("value"),
            &format!("maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"),
        );
    }
    if let Some(policy) = pc.preemption_policy.as_deref()
        && !matches!(policy, "PreemptLowerPriority" | "Never")
    {
        errs.not_supported(
            FieldPath::new("preemptionPolicy"),
            policy,
            &["PreemptLowerPriority", "Never"],
        );
    }
}

/// The `PriorityClass` update hook: value and preemption policy are immutable.
pub(crate) fn validate_priority_class_update(
    new: &PriorityClass,
    old: &PriorityClass,
    _path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if new.value != old.value {
        errs.forbidden(FieldPath::new("value"), "may not be changed in an update.");
    }
    if new.preemption_policy != old.preemption_policy {
        let path = FieldPath::new("preemptionPolicy");
        match new.preemption_policy.as_deref() {
            Some(policy) => errs.invalid(path, policy, "field is immutable"),
            None => errs.invalid(path, Raw("\"null\""), "field is immutable"),
        }
    }
}
