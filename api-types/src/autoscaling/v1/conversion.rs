//! `autoscaling/v1` <-> `autoscaling/v2` (the hub and storage version) for
//! HorizontalPodAutoscaler, as Kubernetes converts them: v1 holds one CPU
//! utilization target, and what it cannot express travels in annotations so
//! that an autoscaler written in v2, rewritten through v1 and read in v2 again
//! loses nothing:
//!
//! - `autoscaling.alpha.kubernetes.io/metrics`: the metrics other than the CPU
//!   utilization target, as v1 metric specs (JSON);
//! - `autoscaling.alpha.kubernetes.io/current-metrics`: every current metric;
//! - `autoscaling.alpha.kubernetes.io/conditions`: the conditions;
//! - `autoscaling.alpha.kubernetes.io/behavior`: the scaling behavior, in the
//!   Go field names of Kubernetes' internal type (that is what upstream writes).
//!
//! Reading v1 into v2 takes the annotations back out (and drops them); a v1
//! object without metrics gets the implicit 80% CPU target made explicit.
//! Annotations that do not parse are left in place and ignored, so a bad
//! annotation never makes an object unreadable.

use std::collections::BTreeMap;

use kapi_runtime::Quantity;
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::HorizontalPodAutoscaler as V1;
use super::horizontalpodautoscaler::{
    CrossVersionObjectReference as V1Ref, HorizontalPodAutoscalerSpec as V1Spec,
    HorizontalPodAutoscalerStatus as V1Status,
};
use super::metric as v1m;
use crate::autoscaling::v2::HorizontalPodAutoscaler as V2;
use crate::autoscaling::v2::horizontalpodautoscaler::{
    CrossVersionObjectReference as V2Ref, HPAScalingPolicy, HPAScalingRules,
    HorizontalPodAutoscalerBehavior, HorizontalPodAutoscalerCondition as V2Condition,
    HorizontalPodAutoscalerSpec as V2Spec, HorizontalPodAutoscalerStatus as V2Status,
};
use crate::autoscaling::v2::metric as v2m;

/// The v2 metrics v1 cannot express (v1 metric specs, JSON).
pub const METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// Every current metric (v1 metric statuses, JSON).
pub const CURRENT_METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// The conditions (JSON).
pub const CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// The scaling behavior (JSON with Go's internal field names).
pub const BEHAVIOR_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/behavior";

/// The CPU utilization v1 implies when no metric is given.
const DEFAULT_CPU_UTILIZATION: i32 = 80;

/// v1 -> v2.
pub fn to_hub(v1: V1) -> V2 {
    let V1 {
        mut metadata,
        spec,
        status,
    } = v1;
    let V1Spec {
        scale_target_ref,
        min_replicas,
        max_replicas,
        target_cpu_utilization_percentage,
    } = spec;
    let V1Status {
        observed_generation,
        last_scale_time,
        current_replicas,
        desired_replicas,
        current_cpu_utilization_percentage,
    } = status;

    let cpu = target_cpu_utilization_percentage.map(cpu_utilization_metric);
    let mut metrics = match take_json::<Vec<v1m::MetricSpec>>(&mut metadata, METRICS_ANNOTATION) {
        // The CPU target goes after the others, where upstream puts it.
        Some(others) => others
            .into_iter()
            .map(metric_spec_to_v2)
            .chain(cpu)
            .collect(),
        None => cpu.into_iter().collect::<Vec<_>>(),
    };
    if metrics.is_empty() {
        metrics.push(cpu_utilization_metric(DEFAULT_CPU_UTILIZATION));
    }
    let current_metrics =
        match take_json::<Vec<v1m::MetricStatus>>(&mut metadata, CURRENT_METRICS_ANNOTATION) {
            Some(current) => Some(current.into_iter().map(metric_status_to_v2).collect()),
            None => current_cpu_utilization_percentage.map(|u| vec![cpu_utilization_status(u)]),
        };
    let conditions = take_json::<Vec<v1m::HorizontalPodAutoscalerCondition>>(
        &mut metadata,
        CONDITIONS_ANNOTATION,
    )
    .map(|c| c.into_iter().map(condition_to_v2).collect());
    let behavior =
        take_json::<GoBehavior>(&mut metadata, BEHAVIOR_ANNOTATION).map(GoBehavior::into_v2);

    V2 {
        metadata,
        spec: V2Spec {
            scale_target_ref: ref_to_v2(scale_target_ref),
            min_replicas,
            max_replicas,
            metrics: Some(metrics),
            behavior,
        },
        status: V2Status {
            observed_generation,
            last_scale_time,
            current_replicas: Some(current_replicas).filter(|r| *r != 0),
            desired_replicas,
            current_metrics,
            conditions,
        },
    }
}

/// v2 -> v1.
pub fn from_hub(v2: V2) -> V1 {
    let V2 {
        mut metadata,
        spec,
        status,
    } = v2;
    let V2Spec {
        scale_target_ref,
        min_replicas,
        max_replicas,
        metrics,
        behavior,
    } = spec;
    let V2Status {
        observed_generation,
        last_scale_time,
        current_replicas,
        desired_replicas,
        current_metrics,
        conditions,
    } = status;
    let metrics = metrics.unwrap_or_default();
    let current_metrics = current_metrics.unwrap_or_default();
    let conditions = conditions.unwrap_or_default();

    // The first CPU resource metric gives the target, when it is a utilization.
    let target_cpu = metrics
        .iter()
        .find_map(|m| cpu_resource(m.type_.as_str(), m.resource.as_ref()))
        .and_then(|r| r.target.average_utilization);
    // The last CPU resource measurement gives the current utilization.
    let current_cpu = current_metrics
        .iter()
        .filter_map(|m| match (m.type_.as_str(), m.resource.as_ref()) {
            ("Resource", Some(r)) if r.name == "cpu" => Some(r.current.average_utilization),
            _ => None,
        })
        .flatten()
        .last();

    let others: Vec<v1m::MetricSpec> = metrics
        .into_iter()
        .filter(|m| {
            cpu_resource(m.type_.as_str(), m.resource.as_ref())
                .is_none_or(|r| r.target.average_utilization.is_none())
        })
        .map(metric_spec_to_v1)
        .collect();
    if !others.is_empty() {
        put_json(&mut metadata, METRICS_ANNOTATION, &others);
    }
    if !current_metrics.is_empty() {
        let current: Vec<v1m::MetricStatus> = current_metrics
            .into_iter()
            .map(metric_status_to_v1)
            .collect();
        put_json(&mut metadata, CURRENT_METRICS_ANNOTATION, &current);
    }
    if !conditions.is_empty() {
        let conditions: Vec<v1m::HorizontalPodAutoscalerCondition> =
            conditions.into_iter().map(condition_to_v1).collect();
        put_json(&mut metadata, CONDITIONS_ANNOTATION, &conditions);
    }
    if let Some(behavior) = behavior {
        put_json(
            &mut metadata,
            BEHAVIOR_ANNOTATION,
            &GoBehavior::from_v2(behavior),
        );
    }

    V1 {
        metadata,
        spec: V1Spec {
            scale_target_ref: ref_to_v1(scale_target_ref),
            min_replicas,
            max_replicas,
            target_cpu_utilization_percentage: target_cpu,
        },
        status: V1Status {
            observed_generation,
            last_scale_time,
            current_replicas: current_replicas.unwrap_or(0),
            desired_replicas,
            current_cpu_utilization_percentage: current_cpu,
        },
    }
}

fn cpu_resource<'a>(
    type_: &str,
    resource: Option<&'a v2m::ResourceMetricSource>,
) -> Option<&'a v2m::ResourceMetricSource> {
    resource.filter(|r| type_ == "Resource" && r.name == "cpu")
}

/// Removes an annotation and parses it; one that does not parse stays.
fn take_json<T: serde::de::DeserializeOwned>(meta: &mut ObjectMeta, key: &str) -> Option<T> {
    let annotations = meta.annotations.as_mut()?;
    let parsed = serde_json::from_str(annotations.get(key)?).ok()?;
    annotations.remove(key);
    if annotations.is_empty() {
        meta.annotations = None;
    }
    Some(parsed)
}

fn put_json<T: Serialize>(meta: &mut ObjectMeta, key: &str, value: &T) {
    // Serializing these plain structs cannot fail; an empty string would be
    // read back as no value.
    let text = serde_json::to_string(value).unwrap_or_default();
    meta.annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(key.to_owned(), text);
}

fn zero() -> Quantity {
    Quantity("0".to_owned())
}

fn cpu_utilization_metric(utilization: i32) -> v2m::MetricSpec {
    v2m::MetricSpec {
        type_: "Resource".to_owned(),
        resource: Some(v2m::ResourceMetricSource {
            name: "cpu".to_owned(),
            target: v2m::MetricTarget {
                type_: "Utilization".to_owned(),
                average_utilization: Some(utilization),
                ..v2m::MetricTarget::default()
            },
        }),
        ..v2m::MetricSpec::default()
    }
}

fn cpu_utilization_status(utilization: i32) -> v2m::MetricStatus {
    v2m::MetricStatus {
        type_: "Resource".to_owned(),
        resource: Some(v2m::ResourceMetricStatus {
            name: "cpu".to_owned(),
            current: v2m::MetricValueStatus {
                average_utilization: Some(utilization),
                ..v2m::MetricValueStatus::default()
            },
        }),
        ..v2m::MetricStatus::default()
    }
}

fn ref_to_v2(r: V1Ref) -> V2Ref {
    let V1Ref {
        kind,
        name,
        api_version,
    } = r;
    V2Ref {
        kind,
        name,
        api_version,
    }
}

fn ref_to_v1(r: V2Ref) -> V1Ref {
    let V2Ref {
        kind,
        name,
        api_version,
    } = r;
    V1Ref {
        kind,
        name,
        api_version,
    }
}

fn identifier(
    name: String,
    selector: Option<kapi_runtime::meta::LabelSelector>,
) -> v2m::MetricIdentifier {
    v2m::MetricIdentifier { name, selector }
}

fn metric_spec_to_v2(m: v1m::MetricSpec) -> v2m::MetricSpec {
    let v1m::MetricSpec {
        type_,
        object,
        pods,
        resource,
        container_resource,
        external,
    } = m;
    v2m::MetricSpec {
        type_,
        object: object.map(|o| {
            let v1m::ObjectMetricSource {
                target,
                metric_name,
                target_value,
                selector,
                average_value,
            } = o;
            v2m::ObjectMetricSource {
                described_object: ref_to_v2(target),
                target: v2m::MetricTarget {
                    type_: if average_value.is_some() {
                        "AverageValue"
                    } else {
                        "Value"
                    }
                    .to_owned(),
                    value: Some(target_value),
                    average_value,
                    average_utilization: None,
                },
                metric: identifier(metric_name, selector),
            }
        }),
        pods: pods.map(|p| {
            let v1m::PodsMetricSource {
                metric_name,
                target_average_value,
                selector,
            } = p;
            v2m::PodsMetricSource {
                metric: identifier(metric_name, selector),
                target: v2m::MetricTarget {
                    type_: "AverageValue".to_owned(),
                    average_value: Some(target_average_value),
                    ..v2m::MetricTarget::default()
                },
            }
        }),
        resource: resource.map(|r| {
            let v1m::ResourceMetricSource {
                name,
                target_average_utilization,
                target_average_value,
            } = r;
            v2m::ResourceMetricSource {
                name,
                target: resource_target(target_average_utilization, target_average_value),
            }
        }),
        container_resource: container_resource.map(|r| {
            let v1m::ContainerResourceMetricSource {
                name,
                target_average_utilization,
                target_average_value,
                container,
            } = r;
            v2m::ContainerResourceMetricSource {
                name,
                target: resource_target(target_average_utilization, target_average_value),
                container,
            }
        }),
        external: external.map(|e| {
            let v1m::ExternalMetricSource {
                metric_name,
                metric_selector,
                target_value,
                target_average_value,
            } = e;
            v2m::ExternalMetricSource {
                metric: identifier(metric_name, metric_selector),
                target: v2m::MetricTarget {
                    type_: if target_value.is_some() {
                        "Value"
                    } else {
                        "AverageValue"
                    }
                    .to_owned(),
                    value: target_value,
                    average_value: target_average_value,
                    average_utilization: None,
                },
            }
        }),
    }
}

fn resource_target(utilization: Option<i32>, average_value: Option<Quantity>) -> v2m::MetricTarget {
    v2m::MetricTarget {
        type_: if utilization.is_some() {
            "Utilization"
        } else {
            "AverageValue"
        }
        .to_owned(),
        value: None,
        average_value,
        average_utilization: utilization,
    }
}

fn metric_spec_to_v1(m: v2m::MetricSpec) -> v1m::MetricSpec {
    let v2m::MetricSpec {
        type_,
        object,
        pods,
        resource,
        container_resource,
        external,
    } = m;
    v1m::MetricSpec {
        type_,
        object: object.map(|o| {
            let v2m::ObjectMetricSource {
                described_object,
                target,
                metric,
            } = o;
            v1m::ObjectMetricSource {
                target: ref_to_v1(described_object),
                metric_name: metric.name,
                target_value: target.value.unwrap_or_else(zero),
                selector: metric.selector,
                average_value: target.average_value,
            }
        }),
        pods: pods.map(|p| {
            let v2m::PodsMetricSource { metric, target } = p;
            v1m::PodsMetricSource {
                metric_name: metric.name,
                target_average_value: target.average_value.unwrap_or_else(zero),
                selector: metric.selector,
            }
        }),
        resource: resource.map(|r| {
            let v2m::ResourceMetricSource { name, target } = r;
            v1m::ResourceMetricSource {
                name,
                target_average_utilization: target.average_utilization,
                target_average_value: target.average_value,
            }
        }),
        container_resource: container_resource.map(|r| {
            let v2m::ContainerResourceMetricSource {
                name,
                target,
                container,
            } = r;
            v1m::ContainerResourceMetricSource {
                name,
                target_average_utilization: target.average_utilization,
                target_average_value: target.average_value,
                container,
            }
        }),
        external: external.map(|e| {
            let v2m::ExternalMetricSource { metric, target } = e;
            v1m::ExternalMetricSource {
                metric_name: metric.name,
                metric_selector: metric.selector,
                target_value: target.value,
                target_average_value: target.average_value,
            }
        }),
    }
}

fn metric_status_to_v2(m: v1m::MetricStatus) -> v2m::MetricStatus {
    let v1m::MetricStatus {
        type_,
        object,
        pods,
        resource,
        container_resource,
        external,
    } = m;
    v2m::MetricStatus {
        type_,
        object: object.map(|o| {
            let v1m::ObjectMetricStatus {
                target,
                metric_name,
                current_value,
                selector,
                average_value,
            } = o;
            v2m::ObjectMetricStatus {
                metric: identifier(metric_name, selector),
                current: v2m::MetricValueStatus {
                    value: Some(current_value),
                    average_value,
                    average_utilization: None,
                },
                described_object: ref_to_v2(target),
            }
        }),
        pods: pods.map(|p| {
            let v1m::PodsMetricStatus {
                metric_name,
                current_average_value,
                selector,
            } = p;
            v2m::PodsMetricStatus {
                metric: identifier(metric_name, selector),
                current: v2m::MetricValueStatus {
                    average_value: Some(current_average_value),
                    ..v2m::MetricValueStatus::default()
                },
            }
        }),
        resource: resource.map(|r| {
            let v1m::ResourceMetricStatus {
                name,
                current_average_utilization,
                current_average_value,
            } = r;
            v2m::ResourceMetricStatus {
                name,
                current: v2m::MetricValueStatus {
                    value: None,
                    average_value: Some(current_average_value),
                    average_utilization: current_average_utilization,
                },
            }
        }),
        container_resource: container_resource.map(|r| {
            let v1m::ContainerResourceMetricStatus {
                name,
                current_average_utilization,
                current_average_value,
                container,
            } = r;
            v2m::ContainerResourceMetricStatus {
                name,
                current: v2m::MetricValueStatus {
                    value: None,
                    average_value: Some(current_average_value),
                    average_utilization: current_average_utilization,
                },
                container,
            }
        }),
        external: external.map(|e| {
            let v1m::ExternalMetricStatus {
                metric_name,
                metric_selector,
                current_value,
                current_average_value,
            } = e;
            v2m::ExternalMetricStatus {
                metric: identifier(metric_name, metric_selector),
                current: v2m::MetricValueStatus {
                    value: Some(current_value),
                    average_value: current_average_value,
                    average_utilization: None,
                },
            }
        }),
    }
}

fn metric_status_to_v1(m: v2m::MetricStatus) -> v1m::MetricStatus {
    let v2m::MetricStatus {
        type_,
        object,
        pods,
        resource,
        container_resource,
        external,
    } = m;
    v1m::MetricStatus {
        type_,
        object: object.map(|o| {
            let v2m::ObjectMetricStatus {
                metric,
                current,
                described_object,
            } = o;
            v1m::ObjectMetricStatus {
                target: ref_to_v1(described_object),
                metric_name: metric.name,
                current_value: current.value.unwrap_or_else(zero),
                selector: metric.selector,
                average_value: current.average_value,
            }
        }),
        pods: pods.map(|p| {
            let v2m::PodsMetricStatus { metric, current } = p;
            v1m::PodsMetricStatus {
                metric_name: metric.name,
                current_average_value: current.average_value.unwrap_or_else(zero),
                selector: metric.selector,
            }
        }),
        resource: resource.map(|r| {
            let v2m::ResourceMetricStatus { name, current } = r;
            v1m::ResourceMetricStatus {
                name,
                current_average_utilization: current.average_utilization,
                current_average_value: current.average_value.unwrap_or_else(zero),
            }
        }),
        container_resource: container_resource.map(|r| {
            let v2m::ContainerResourceMetricStatus {
                name,
                current,
                container,
            } = r;
            v1m::ContainerResourceMetricStatus {
                name,
                current_average_utilization: current.average_utilization,
                current_average_value: current.average_value.unwrap_or_else(zero),
                container,
            }
        }),
        external: external.map(|e| {
            let v2m::ExternalMetricStatus { metric, current } = e;
            v1m::ExternalMetricStatus {
                metric_name: metric.name,
                metric_selector: metric.selector,
                current_value: current.value.unwrap_or_else(zero),
                current_average_value: current.average_value,
            }
        }),
    }
}

fn condition_to_v2(c: v1m::HorizontalPodAutoscalerCondition) -> V2Condition {
    let v1m::HorizontalPodAutoscalerCondition {
        type_,
        status,
        last_transition_time,
        reason,
        message,
    } = c;
    V2Condition {
        type_,
        status,
        last_transition_time,
        reason,
        message,
    }
}

fn condition_to_v1(c: V2Condition) -> v1m::HorizontalPodAutoscalerCondition {
    let V2Condition {
        type_,
        status,
        last_transition_time,
        reason,
        message,
    } = c;
    v1m::HorizontalPodAutoscalerCondition {
        type_,
        status,
        last_transition_time,
        reason,
        message,
    }
}

/// The behavior annotation's JSON: Kubernetes' internal behavior type, which
/// has no JSON tags, so Go writes its field names and `null` for what is unset.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct GoBehavior {
    #[serde(default)]
    scale_up: Option<GoRules>,
    #[serde(default)]
    scale_down: Option<GoRules>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct GoRules {
    #[serde(default)]
    stabilization_window_seconds: Option<i32>,
    #[serde(default)]
    select_policy: Option<String>,
    #[serde(default)]
    policies: Option<Vec<GoPolicy>>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct GoPolicy {
    #[serde(default)]
    r#type: String,
    #[serde(default)]
    value: i32,
    #[serde(default)]
    period_seconds: i32,
}

impl GoBehavior {
    fn from_v2(b: HorizontalPodAutoscalerBehavior) -> GoBehavior {
        let HorizontalPodAutoscalerBehavior {
            scale_up,
            scale_down,
        } = b;
        GoBehavior {
            scale_up: scale_up.map(GoRules::from_v2),
            scale_down: scale_down.map(GoRules::from_v2),
        }
    }

    fn into_v2(self) -> HorizontalPodAutoscalerBehavior {
        HorizontalPodAutoscalerBehavior {
            scale_up: self.scale_up.map(GoRules::into_v2),
            scale_down: self.scale_down.map(GoRules::into_v2),
        }
    }
}

impl GoRules {
    fn from_v2(r: HPAScalingRules) -> GoRules {
        let HPAScalingRules {
            stabilization_window_seconds,
            select_policy,
            policies,
        } = r;
        GoRules {
            stabilization_window_seconds,
            select_policy,
            policies: policies.map(|ps| {
                ps.into_iter()
                    .map(|p| {
                        let HPAScalingPolicy {
                            type_,
                            value,
                            period_seconds,
                        } = p;
                        GoPolicy {
                            r#type: type_,
                            value,
                            period_seconds,
                        }
                    })
                    .collect()
            }),
        }
    }

    fn into_v2(self) -> HPAScalingRules {
        HPAScalingRules {
            stabilization_window_seconds: self.stabilization_window_seconds,
            select_policy: self.select_policy,
            policies: self.policies.map(|ps| {
                ps.into_iter()
                    .map(|p| HPAScalingPolicy {
                        type_: p.r#type,
                        value: p.value,
                        period_seconds: p.period_seconds,
                    })
                    .collect()
            }),
        }
    }
}
