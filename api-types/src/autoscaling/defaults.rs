//! HorizontalPodAutoscaler defaults, as Kubernetes 1.32 applies them in each
//! version: at least one replica, an 80% CPU utilization target when nothing
//! else is asked for, and in v2 the scaling behavior's rules filled in.

use crate::autoscaling::v1::HorizontalPodAutoscaler as V1;
use crate::autoscaling::v2::HorizontalPodAutoscaler as V2;
use crate::autoscaling::v2::horizontalpodautoscaler::{HPAScalingPolicy, HPAScalingRules};
use crate::autoscaling::v2::metric::{MetricSpec, MetricTarget, ResourceMetricSource};

/// The CPU utilization an autoscaler targets when none is given.
pub const DEFAULT_CPU_UTILIZATION: i32 = 80;

/// v1: `minReplicas` 1 and `targetCPUUtilizationPercentage` 80 when unset.
pub fn default_v1(hpa: &mut V1) {
    hpa.spec.min_replicas.get_or_insert(1);
    hpa.spec
        .target_cpu_utilization_percentage
        .get_or_insert(DEFAULT_CPU_UTILIZATION);
}

/// v2: `minReplicas` 1, an 80% CPU metric when there is none, and every
/// scaling rule of a given behavior completed.
pub fn default_v2(hpa: &mut V2) {
    let spec = &mut hpa.spec;
    spec.min_replicas.get_or_insert(1);
    if spec.metrics.as_ref().is_none_or(Vec::is_empty) {
        spec.metrics = Some(vec![MetricSpec {
            type_: "Resource".to_owned(),
            resource: Some(ResourceMetricSource {
                name: "cpu".to_owned(),
                target: MetricTarget {
                    type_: "Utilization".to_owned(),
                    average_utilization: Some(DEFAULT_CPU_UTILIZATION),
                    ..MetricTarget::default()
                },
            }),
            ..MetricSpec::default()
        }]);
    }
    if let Some(behavior) = spec.behavior.as_mut() {
        complete(
            behavior
                .scale_up
                .get_or_insert_with(HPAScalingRules::default),
            Some(0),
            &[("Pods", 4, 15), ("Percent", 100, 15)],
        );
        complete(
            behavior
                .scale_down
                .get_or_insert_with(HPAScalingRules::default),
            // Scaling down keeps an unset window (the controller then uses
            // its --horizontal-pod-autoscaler-downscale-stabilization flag).
            None,
            &[("Percent", 100, 15)],
        );
    }
}

/// Fills the unset parts of one direction's rules.
fn complete(rules: &mut HPAScalingRules, window: Option<i32>, policies: &[(&str, i32, i32)]) {
    if rules.stabilization_window_seconds.is_none() {
        rules.stabilization_window_seconds = window;
    }
    rules.select_policy.get_or_insert_with(|| "Max".to_owned());
    if rules.policies.is_none() {
        rules.policies = Some(
            policies
                .iter()
                .map(|(type_, value, period_seconds)| HPAScalingPolicy {
                    type_: (*type_).to_owned(),
                    value: *value,
                    period_seconds: *period_seconds,
                })
                .collect(),
        );
    }
}
