//! The checks of pkg/apis/autoscaling/validation for HorizontalPodAutoscalers
//! (their internal form, which autoscaling/v2 mirrors): replica bounds, the
//! scale target, the metrics (in `validation/metrics.rs`) and the scaling
//! behavior.

mod metrics;

use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::horizontalpodautoscaler::{
    CrossVersionObjectReference, HPAScalingPolicy, HPAScalingRules, HorizontalPodAutoscaler,
    HorizontalPodAutoscalerSpec,
};
use crate::validation::{nonnegative, path_segment_name};

/// Without the HPAScaleToZero gate (off in 1.32), at least one replica.
const MIN_REPLICAS_LOWER_BOUND: i32 = 1;
/// The longest scaling policy period (`MaxPeriodSeconds`).
const MAX_PERIOD_SECONDS: i32 = 1800;
/// The longest stabilization window (`MaxStabilizationWindowSeconds`).
const MAX_STABILIZATION_WINDOW_SECONDS: i32 = 3600;

/// The `HorizontalPodAutoscalerSpec` hook (`validateHorizontalPodAutoscalerSpec`).
pub(crate) fn validate_hpa_spec(
    spec: &HorizontalPodAutoscalerSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if let Some(min) = spec.min_replicas
        && min < MIN_REPLICAS_LOWER_BOUND
    {
        errs.invalid(
            path.child("minReplicas"),
            min,
            &format!("must be greater than or equal to {MIN_REPLICAS_LOWER_BOUND}"),
        );
    }
    let max = spec.max_replicas;
    if max < 1 {
        errs.invalid(path.child("maxReplicas"), max, "must be greater than 0");
    }
    if spec.min_replicas.is_some_and(|min| max < min) {
        errs.invalid(
            path.child("maxReplicas"),
            max,
            "must be greater than or equal to `minReplicas`",
        );
    }
    object_reference(&spec.scale_target_ref, &path.child("scaleTargetRef"), errs);
    let metrics = spec.metrics.as_deref().unwrap_or_default();
    metrics::validate_metrics(metrics, spec.min_replicas, &path.child("metrics"), errs);
    if let Some(behavior) = &spec.behavior {
        let rules = [
            ("scaleUp", behavior.scale_up.as_ref()),
            ("scaleDown", behavior.scale_down.as_ref()),
        ];
        for (field, rules) in rules {
            if let Some(rules) = rules {
                scaling_rules(rules, &path.child("behavior").child(field), errs);
            }
        }
    }
}

/// The `HorizontalPodAutoscaler` update hook
/// (`ValidateHorizontalPodAutoscalerUpdate` and, for writes through
/// `/status`, `ValidateHorizontalPodAutoscalerStatusUpdate`). An autoscaler
/// stored with `minReplicas: 0` (written while the HPAScaleToZero gate was
/// on) may keep it, so the create bound's error is taken back. The replica
/// counts of the status must not be negative; a main-endpoint write keeps
/// the stored status, so checking it on every update only bites `/status`.
pub(crate) fn validate_hpa_update(
    new: &HorizontalPodAutoscaler,
    old: &HorizontalPodAutoscaler,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if old.spec.min_replicas == Some(0) {
        let min_path = path.child("spec").child("minReplicas");
        let bound = format!("must be greater than or equal to {MIN_REPLICAS_LOWER_BOUND}");
        errs.0
            .retain(|e| !(e.path == min_path && e.message.ends_with(&bound)));
    }
    let status_path = path.child("status");
    let status = &new.status;
    let counts = [
        ("currentReplicas", status.current_replicas.unwrap_or(0)),
        ("desiredReplicas", status.desired_replicas),
    ];
    for (field, count) in counts {
        nonnegative(Some(i64::from(count)), &status_path.child(field), errs);
    }
}

/// `ValidateCrossVersionObjectReference` past the field rules' `Required`:
/// kind and name are path segments.
pub(super) fn object_reference(
    reference: &CrossVersionObjectReference,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    for (field, value) in [("kind", &reference.kind), ("name", &reference.name)] {
        if !value.is_empty() {
            path_segment_name(value, &path.child(field), errs);
        }
    }
}

/// `validateScalingRules`.
fn scaling_rules(rules: &HPAScalingRules, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(window) = rules.stabilization_window_seconds {
        let window_path = path.child("stabilizationWindowSeconds");
        if window < 0 {
            errs.invalid(
                window_path.clone(),
                window,
                "must be greater than or equal to zero",
            );
        }
        if window > MAX_STABILIZATION_WINDOW_SECONDS {
            errs.invalid(
                window_path,
                window,
                &format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            );
        }
    }
    if let Some(select) = rules.select_policy.as_deref()
        && !matches!(select, "Max" | "Min" | "Disabled")
    {
        errs.not_supported(
            path.child("selectPolicy"),
            select,
            &["Disabled", "Max", "Min"],
        );
    }
    let policies = rules.policies.as_deref().unwrap_or_default();
    if policies.is_empty() {
        errs.required(path.child("policies"), "must specify at least one Policy");
    }
    for (i, policy) in policies.iter().enumerate() {
        scaling_policy(policy, &path.child("policies").index(i), errs);
    }
}

/// `validateScalingPolicy`.
fn scaling_policy(policy: &HPAScalingPolicy, path: &FieldPath, errs: &mut FieldErrors) {
    if !matches!(policy.type_.as_str(), "Pods" | "Percent") {
        errs.not_supported(path.child("type"), &policy.type_, &["Percent", "Pods"]);
    }
    if policy.value <= 0 {
        errs.invalid(
            path.child("value"),
            policy.value,
            "must be greater than zero",
        );
    }
    let period = policy.period_seconds;
    if period <= 0 {
        errs.invalid(
            path.child("periodSeconds"),
            period,
            "must be greater than zero",
        );
    }
    if period > MAX_PERIOD_SECONDS {
        errs.invalid(
            path.child("periodSeconds"),
            period,
            &format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
        );
    }
}
