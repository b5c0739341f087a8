//! The checks of pkg/apis/scheduling/validation for PriorityClasses.

use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::priorityclass::PriorityClass;
use crate::validation::Raw;

/// The highest priority a class not named `system-` may have.
const HIGHEST_USER_PRIORITY: i32 = 1_000_000_000;

/// The classes every cluster has (`name`, `value`), which the API server
/// creates at start and nobody else may: a `system-` name is one of them.
pub(crate) const SYSTEM_PRIORITY_CLASSES: &[(&str, i32)] = &[
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

/// The `PriorityClass` hook: `system-` names are the system classes' (with
/// their values, never the global default), user classes stay below the
/// system range, the preemption policy is known.
pub(crate) fn validate_priority_class(
    pc: &PriorityClass,
    _path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let name = pc.metadata.name.as_deref().unwrap_or_default();
    if name.starts_with("system-") {
        if let Err(why) = check_system_class(name, pc) {
            errs.forbidden(
                FieldPath::new("metadata").child("name"),
                &format!(
                    "priority class names with 'system-' prefix are reserved for system use only. error: {why}"
                ),
            );
        }
    } else if pc.value > HIGHEST_USER_PRIORITY {
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

/// Whether a `system-` class is one of [`SYSTEM_PRIORITY_CLASSES`], as it is
/// defined; why not otherwise.
fn check_system_class(name: &str, pc: &PriorityClass) -> Result<(), String> {
    let Some((_, value)) = SYSTEM_PRIORITY_CLASSES.iter().find(|(n, _)| *n == name) else {
        return Err(format!("{name} is not a known system priority class"));
    };
    if pc.value != *value {
        return Err(format!("value of {name} PriorityClass must be {value}"));
    }
    if pc.global_default == Some(true) {
        return Err(format!(
            "globalDefault of {name} PriorityClass must be false"
        ));
    }
    Ok(())
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
