//! The checks of pkg/apis/node/validation for RuntimeClasses: a DNS label
//! handler (immutable), the pod overhead as container limits, and the
//! scheduling constraints.

use std::collections::BTreeSet;

use kapi_runtime::validation::{FieldErrors, FieldPath, dns1123_label_errors};

use super::runtimeclass::{Overhead, RuntimeClass, Scheduling};
use crate::core::v1::pod::affinity::Toleration;
use crate::core::v1::pod::container::ResourceRequirements;
use crate::core::v1::pod::validation::validate_resources;
use crate::validation::{Raw, validate_labels};

/// The `RuntimeClass` hook (`ValidateRuntimeClass`). An empty handler gets
/// the label error, not `Required`, as upstream's does.
pub(crate) fn validate_runtime_class(
    class: &RuntimeClass,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    for detail in dns1123_label_errors(&class.handler) {
        errs.invalid(path.child("handler"), class.handler.as_str(), &detail);
    }
    if let Some(overhead) = &class.overhead {
        validate_overhead(overhead, &path.child("overhead"), errs);
    }
}

/// `validateOverhead`: the fixed pod overhead is checked as the limits of a
/// container (`overhead.limits[<name>]`).
fn validate_overhead(overhead: &Overhead, path: &FieldPath, errs: &mut FieldErrors) {
    let requirements = ResourceRequirements {
        limits: overhead.pod_fixed.clone(),
        ..ResourceRequirements::default()
    };
    validate_resources(&requirements, path, errs);
}

/// The `Scheduling` hook (`validateScheduling`): node selector labels, and
/// the tolerations, whose errors upstream reports under
/// `scheduling.tolerations.tolerations[i]` (it adds the field name twice),
/// then a toleration given twice (same key, operator, value and effect),
/// reported at `scheduling.tolerations[i]`.
pub(crate) fn validate_scheduling(
    scheduling: &Scheduling,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    validate_labels(
        scheduling.node_selector.as_ref(),
        &path.child("nodeSelector"),
        errs,
    );
    let ours = format!("{}[", path.child("tolerations"));
    let theirs = format!("{}[", path.child("tolerations").child("tolerations"));
    for e in &mut errs.0 {
        if let Some(rest) = e.path.as_str().strip_prefix(&ours) {
            e.path = FieldPath::new(&format!("{theirs}{rest}"));
        }
    }
    let mut seen = BTreeSet::new();
    for (i, t) in scheduling.tolerations.iter().flatten().enumerate() {
        let text = |s: &Option<String>| s.clone().unwrap_or_default();
        let key = (
            text(&t.key),
            text(&t.operator),
            text(&t.value),
            text(&t.effect),
        );
        if !seen.insert(key) {
            errs.duplicate(path.child("tolerations").index(i), Raw(&go_toleration(t)));
        }
    }
}

/// A toleration as Go's `%#v` prints it. A set `tolerationSeconds` is a
/// pointer there (an address we cannot match); we print a placeholder.
fn go_toleration(t: &Toleration) -> String {
    let text = |s: &Option<String>| s.clone().unwrap_or_default();
    let seconds = match t.toleration_seconds {
        None => "(*int64)(nil)",
        Some(_) => "(*int64)(0xc000000000)",
    };
    format!(
        "core.Toleration{{Key:{:?}, Operator:{:?}, Value:{:?}, Effect:{:?}, TolerationSeconds:{seconds}}}",
        text(&t.key),
        text(&t.operator),
        text(&t.value),
        text(&t.effect),
    )
}

/// The `RuntimeClass` update hook: the handler is immutable.
pub(crate) fn validate_runtime_class_update(
    new: &RuntimeClass,
    old: &RuntimeClass,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if new.handler != old.handler {
        errs.invalid(
            path.child("handler"),
            new.handler.as_str(),
            "field is immutable",
        );
    }
}
