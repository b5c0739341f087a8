//! The checks of pkg/apis/apps/validation: selectors that match their
//! template, rollout strategies, and what an update may change.

use kapi_runtime::meta::LabelSelector;
use kapi_runtime::validation::{FieldErrors, FieldPath};

use crate::core::v1::pod::PodTemplateSpec;
use crate::labels::{GoMap, selector_is_empty, selector_matches};
use crate::validation::{
    GoIntOrString, GoSelector, int_or_percent, int_or_percent_value, nonnegative,
    not_more_than_100_percent, selector_converts, validate_label_selector,
};

use super::daemonset::{DaemonSet, DaemonSetSpec, DaemonSetUpdateStrategy};
use super::deployment::{Deployment, DeploymentSpec, DeploymentStrategy};
use super::replicaset::{ReplicaSet, ReplicaSetSpec};
use super::statefulset::{StatefulSet, StatefulSetSpec};

/// A required selector: syntax, and not empty (`kind` names the kind in the
/// message). `false` when the selector cannot become a selector.
fn selector_rules(
    selector: Option<&LabelSelector>,
    kind: &str,
    path: &FieldPath,
    errs: &mut FieldErrors,
) -> bool {
    let selector_path = path.child("selector");
    let Some(selector) = selector else {
        // A missing selector is the field rule's `Required`; it selects nothing.
        return true;
    };
    validate_label_selector(selector, &selector_path, errs);
    if selector_is_empty(selector) {
        let detail = format!("empty selector is invalid for {kind}");
        errs.invalid(selector_path.clone(), GoSelector(selector), &detail);
    }
    if selector_converts(selector) {
        return true;
    }
    errs.invalid(
        selector_path,
        GoSelector(selector),
        "invalid label selector",
    );
    false
}

/// The template's labels must satisfy a non-empty selector; a missing one
/// matches nothing.
fn template_matches(
    selector: Option<&LabelSelector>,
    template: &PodTemplateSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let labels = template.metadata.labels.as_ref();
    let matches = match selector {
        None => false,
        Some(s) => selector_is_empty(s) || selector_matches(s, labels),
    };
    if !matches {
        errs.invalid(
            path.child("template").child("metadata").child("labels"),
            GoMap(labels),
            "`selector` does not match template `labels`",
        );
    }
}

/// Pods of a controller restart always and have no deadline.
fn controller_pod_rules(
    template: &PodTemplateSpec,
    kind: &str,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let spec_path = path.child("template").child("spec");
    let policy = template.spec.restart_policy.as_deref().unwrap_or_default();
    if policy != "Always" {
        errs.not_supported(spec_path.child("restartPolicy"), policy, &["Always"]);
    }
    if template.spec.active_deadline_seconds.is_some() {
        let detail = format!("activeDeadlineSeconds in {kind} is not Supported");
        errs.forbidden(spec_path.child("activeDeadlineSeconds"), &detail);
    }
}

/// The `DeploymentSpec` hook (`ValidateDeploymentSpec`).
pub(crate) fn validate_deployment_spec(
    spec: &DeploymentSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let selector = spec.selector.as_ref();
    if selector_rules(selector, "deployment", path, errs) {
        template_matches(selector, &spec.template, path, errs);
        controller_pod_rules(&spec.template, "ReplicaSet", path, errs);
    }
    deployment_strategy(&spec.strategy, &path.child("strategy"), errs);
    if let Some(deadline) = spec.progress_deadline_seconds
        && deadline <= spec.min_ready_seconds.unwrap_or_default()
    {
        errs.invalid(
            path.child("progressDeadlineSeconds"),
            deadline,
            "must be greater than minReadySeconds",
        );
    }
}

/// `ValidateDeploymentStrategy`.
fn deployment_strategy(strategy: &DeploymentStrategy, path: &FieldPath, errs: &mut FieldErrors) {
    let rolling_path = path.child("rollingUpdate");
    match strategy.type_.as_deref().unwrap_or_default() {
        "Recreate" if strategy.rolling_update.is_some() => errs.forbidden(
            rolling_path,
            "may not be specified when strategy `type` is 'Recreate'",
        ),
        "Recreate" => {}
        "RollingUpdate" => match &strategy.rolling_update {
            None => errs.required(rolling_path, "this should be defaulted and never be nil"),
            Some(rolling) => {
                let unavailable = rolling.max_unavailable.clone().unwrap_or_default();
                let surge = rolling.max_surge.clone().unwrap_or_default();
                let unavailable_path = rolling_path.child("maxUnavailable");
                int_or_percent(&unavailable, &unavailable_path, errs);
                int_or_percent(&surge, &rolling_path.child("maxSurge"), errs);
                if int_or_percent_value(&unavailable) == 0 && int_or_percent_value(&surge) == 0 {
                    errs.invalid(
                        unavailable_path.clone(),
                        GoIntOrString(&unavailable),
                        "may not be 0 when `maxSurge` is 0",
                    );
                }
                not_more_than_100_percent(&unavailable, &unavailable_path, errs);
            }
        },
        other => errs.not_supported_value(
            path.clone(),
            GoStrategy(
                "apps.DeploymentStrategy",
                other,
                "apps.RollingUpdateDeployment",
                strategy.rolling_update.is_some(),
            ),
            &["Recreate", "RollingUpdate"],
        ),
    }
}

/// A strategy struct as Go prints it; a set rolling-update pointer is shown
/// as `&{...}` where Go shows an address.
struct GoStrategy<'a>(&'static str, &'a str, &'static str, bool);

impl std::fmt::Debug for GoStrategy<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let GoStrategy(kind, type_, rolling, set) = self;
        let pointer = if *set {
            "&{...}".to_owned()
        } else {
            format!("(*{rolling})(nil)")
        };
        write!(f, "{kind}{{Type:{type_:?}, RollingUpdate:{pointer}}}")
    }
}

/// The `ReplicaSetSpec` hook (`ValidateReplicaSetSpec`).
pub(crate) fn validate_replicaset_spec(
    spec: &ReplicaSetSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    nonnegative(spec.replicas.map(i64::from), &path.child("replicas"), errs);
    let min_ready = spec.min_ready_seconds.map(i64::from);
    nonnegative(min_ready, &path.child("minReadySeconds"), errs);
    let selector = spec.selector.as_ref();
    if selector_rules(selector, "deployment", path, errs) {
        template_matches(selector, &spec.template, path, errs);
        controller_pod_rules(&spec.template, "ReplicaSet", path, errs);
    }
}

/// The `DaemonSetSpec` hook (`ValidateDaemonSetSpec`); a daemon set without a
/// selector only fails to match its template.
pub(crate) fn validate_daemonset_spec(
    spec: &DaemonSetSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let selector = spec.selector.as_ref();
    let converts = selector.is_none_or(|s| {
        validate_label_selector(s, &path.child("selector"), errs);
        selector_converts(s)
    });
    if converts {
        template_matches(selector, &spec.template, path, errs);
    }
    if let Some(s) = selector.filter(|s| selector_is_empty(s)) {
        errs.invalid(
            path.child("selector"),
            GoSelector(s),
            "empty selector is invalid for daemonset",
        );
    }
    controller_pod_rules(&spec.template, "DaemonSet", path, errs);
    let min_ready = spec.min_ready_seconds.map(i64::from);
    nonnegative(min_ready, &path.child("minReadySeconds"), errs);
    daemonset_strategy(&spec.update_strategy, &path.child("updateStrategy"), errs);
    let history = spec.revision_history_limit.map(i64::from);
    nonnegative(history, &path.child("revisionHistoryLimit"), errs);
}

/// `ValidateDaemonSetUpdateStrategy`: exactly one of surge and unavailability.
/// An empty type is left to the defaults (upstream never sees one).
fn daemonset_strategy(
    strategy: &DaemonSetUpdateStrategy,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    match strategy.type_.as_deref().unwrap_or_default() {
        "" | "OnDelete" => {}
        "RollingUpdate" => {
            let rolling_path = path.child("rollingUpdate");
            let Some(rolling) = &strategy.rolling_update else {
                errs.required(rolling_path, "");
                return;
            };
            let unavailable = rolling.max_unavailable.clone().unwrap_or_default();
            let surge = rolling.max_surge.clone().unwrap_or_default();
            let (unavailable_path, surge_path) = (
                rolling_path.child("maxUnavailable"),
                rolling_path.child("maxSurge"),
            );
            int_or_percent(&unavailable, &unavailable_path, errs);
            int_or_percent(&surge, &surge_path, errs);
            not_more_than_100_percent(&unavailable, &unavailable_path, errs);
            not_more_than_100_percent(&surge, &surge_path, errs);
            let has_unavailable = int_or_percent_value(&unavailable) != 0;
            let has_surge = int_or_percent_value(&surge) != 0;
            if has_unavailable && has_surge {
                errs.invalid(
                    surge_path,
                    GoIntOrString(&surge),
                    "may not be set when maxUnavailable is non-zero",
                );
            } else if !has_unavailable && !has_surge {
                errs.required(unavailable_path, "cannot be 0 when maxSurge is 0");
            }
        }
        other => errs.not_supported_value(
            path.clone(),
            GoStrategy(
                "apps.DaemonSetUpdateStrategy",
                other,
                "apps.RollingUpdateDaemonSet",
                strategy.rolling_update.is_some(),
            ),
            &["RollingUpdate", "OnDelete"],
        ),
    }
}

/// The `StatefulSetSpec` hook (`ValidateStatefulSetSpec`). Upstream does not
/// validate a stateful set's pod spec (its volumes come partly from the claim
/// templates), so the errors the field rules found under `template.spec` are
/// dropped here, before the controller's own pod rules.
pub(crate) fn validate_statefulset_spec(
    spec: &StatefulSetSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let pod_spec = format!("{}.", path.child("template").child("spec"));
    errs.0.retain(|e| !e.path.as_str().starts_with(&pod_spec));
    // Empty policies and types are left to the defaults, which upstream applies
    // before validating.
    match spec.pod_management_policy.as_deref().unwrap_or_default() {
        "" | "OrderedReady" | "Parallel" => {}
        other => errs.invalid(
            path.child("podManagementPolicy"),
            other,
            "must be 'OrderedReady' or 'Parallel'",
        ),
    }
    statefulset_strategy(spec, path, errs);
    nonnegative(spec.replicas.map(i64::from), &path.child("replicas"), errs);
    let min_ready = spec.min_ready_seconds.map(i64::from);
    nonnegative(min_ready, &path.child("minReadySeconds"), errs);
    if let Some(policy) = &spec.persistent_volume_claim_retention_policy {
        let policy_path = path.child("persistentVolumeClaimRetentionPolicy");
        let fields = [
            ("whenDeleted", &policy.when_deleted),
            ("whenScaled", &policy.when_scaled),
        ];
        for (field, value) in fields {
            let value = value.as_deref().unwrap_or_default();
            if !matches!(value, "" | "Retain" | "Delete") {
                errs.not_supported(policy_path.child(field), value, &["Retain", "Delete"]);
            }
        }
    }
    if let Some(start) = spec.ordinals.as_ref().map(|o| o.start)
        && start < 0
    {
        errs.invalid(
            path.child("ordinals.start"),
            start,
            "must be greater than or equal to 0",
        );
    }
    let selector = spec.selector.as_ref();
    if selector_rules(selector, "statefulset", path, errs) {
        template_matches(selector, &spec.template, path, errs);
    }
    controller_pod_rules(&spec.template, "StatefulSet", path, errs);
}

/// The update strategy of a stateful set.
fn statefulset_strategy(spec: &StatefulSetSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let strategy = &spec.update_strategy;
    let strategy_path = path.child("updateStrategy");
    let rolling_path = strategy_path.child("rollingUpdate");
    match strategy.type_.as_deref().unwrap_or_default() {
        "" => {}
        "OnDelete" => {
            if let Some(rolling) = &strategy.rolling_update {
                let value = format!(
                    "apps.RollingUpdateStatefulSetStrategy{{Partition:{}, MaxUnavailable:{}}}",
                    rolling.partition.unwrap_or_default(),
                    match &rolling.max_unavailable {
                        None => "(*intstr.IntOrString)(nil)".to_owned(),
                        Some(v) => format!("&{:?}", GoIntOrString(v)),
                    }
                );
                errs.invalid(
                    rolling_path,
                    crate::validation::Raw(&value),
                    "only allowed for updateStrategy 'RollingUpdate'",
                );
            }
        }
        "RollingUpdate" => {
            let Some(rolling) = &strategy.rolling_update else {
                return;
            };
            if let Some(partition) = rolling.partition.filter(|p| *p < 0) {
                errs.invalid(
                    rolling_path.child("partition"),
                    partition,
                    "must be greater than or equal to 0",
                );
            }
            // `maxUnavailable` belongs to the MaxUnavailableStatefulSet feature,
            // off in 1.32: upstream drops the field and does not check it.
        }
        other => errs.invalid(
            strategy_path,
            GoStrategy(
                "apps.StatefulSetUpdateStrategy",
                other,
                "apps.RollingUpdateStatefulSetStrategy",
                strategy.rolling_update.is_some(),
            ),
            "must be 'RollingUpdate' or 'OnDelete'",
        ),
    }
}

/// `ValidateImmutableField` of a selector.
fn immutable_selector(
    new: Option<&LabelSelector>,
    old: Option<&LabelSelector>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if new != old {
        let selector_path = path.child("spec").child("selector");
        match new {
            Some(selector) => {
                errs.invalid(selector_path, GoSelector(selector), "field is immutable")
            }
            None => errs.invalid(
                selector_path,
                crate::validation::Raw("<nil>"),
                "field is immutable",
            ),
        }
    }
}

/// The `Deployment` update hook: the selector is immutable.
pub(crate) fn validate_deployment_update(
    new: &Deployment,
    old: &Deployment,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    immutable_selector(
        new.spec.selector.as_ref(),
        old.spec.selector.as_ref(),
        path,
        errs,
    );
}

/// The `ReplicaSet` update hook: the selector is immutable.
pub(crate) fn validate_replicaset_update(
    new: &ReplicaSet,
    old: &ReplicaSet,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    immutable_selector(
        new.spec.selector.as_ref(),
        old.spec.selector.as_ref(),
        path,
        errs,
    );
}

/// The `DaemonSet` update hook: the selector is immutable.
pub(crate) fn validate_daemonset_update(
    new: &DaemonSet,
    old: &DaemonSet,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    immutable_selector(
        new.spec.selector.as_ref(),
        old.spec.selector.as_ref(),
        path,
        errs,
    );
}

/// The `StatefulSet` update hook (`ValidateStatefulSetUpdate`): only the
/// replicas, ordinals, template, update strategy, claim retention policy,
/// revision history limit and minReadySeconds may change.
pub(crate) fn validate_statefulset_update(
    new: &StatefulSet,
    old: &StatefulSet,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let mut same = new.spec.clone();
    let old_spec = &old.spec;
    same.replicas = old_spec.replicas;
    same.template.clone_from(&old_spec.template);
    same.update_strategy.clone_from(&old_spec.update_strategy);
    same.min_ready_seconds = old_spec.min_ready_seconds;
    same.ordinals.clone_from(&old_spec.ordinals);
    same.revision_history_limit = old_spec.revision_history_limit;
    same.persistent_volume_claim_retention_policy
        .clone_from(&old_spec.persistent_volume_claim_retention_policy);
    if &same != old_spec {
        errs.forbidden(
            path.child("spec"),
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', \
             'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and \
             'minReadySeconds' are forbidden",
        );
    }
}
