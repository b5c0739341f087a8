//! `ValidateReplicationControllerSpec`: counts, a selector that matches the
//! template, and the controller's pod rules.

use kapi_runtime::validation::{FieldErrors, FieldPath};

use crate::core::v1::replicationcontroller::ReplicationControllerSpec;
use crate::labels::GoMap;
use crate::validation::nonnegative;

/// The `ReplicationControllerSpec` hook. An empty selector is left to the
/// defaults, which copy the template's labels (upstream never sees one unless
/// the template has no labels either).
pub(crate) fn validate_rc_spec(
    spec: &ReplicationControllerSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    nonnegative(
        spec.min_ready_seconds.map(i64::from),
        &path.child("minReadySeconds"),
        errs,
    );
    nonnegative(spec.replicas.map(i64::from), &path.child("replicas"), errs);
    let selector = spec.selector.as_ref().filter(|s| !s.is_empty());
    let Some(template) = &spec.template else {
        if selector.is_none() {
            errs.required(path.child("selector"), "");
        }
        errs.required(path.child("template"), "");
        return;
    };
    let labels = template.metadata.labels.as_ref();
    match selector {
        None if labels.is_none_or(|l| l.is_empty()) => errs.required(path.child("selector"), ""),
        None => {}
        Some(selector) => {
            let matches = selector
                .iter()
                .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v));
            if !matches {
                errs.invalid(
                    path.child("template").child("metadata").child("labels"),
                    GoMap(labels),
                    "`selector` does not match template `labels`",
                );
            }
        }
    }
    let spec_path = path.child("template").child("spec");
    let policy = template.spec.restart_policy.as_deref().unwrap_or_default();
    if policy != "Always" {
        errs.not_supported(spec_path.child("restartPolicy"), policy, &["Always"]);
    }
    if template.spec.active_deadline_seconds.is_some() {
        errs.forbidden(
            spec_path.child("activeDeadlineSeconds"),
            "activeDeadlineSeconds in ReplicationController is not Supported",
        );
    }
}
