//! The metric types of autoscaling/v1. No field of the v1 kind holds them:
//! they are the JSON of the `autoscaling.alpha.kubernetes.io/metrics`,
//! `.../current-metrics` and `.../conditions` annotations, in which a v1
//! HorizontalPodAutoscaler carries what only the v2 shape has fields for.

use kapi_codegen::ApiType;
use kapi_runtime::Quantity;
use kapi_runtime::meta::{LabelSelector, Time};
use serde::{Deserialize, Serialize};

use super::horizontalpodautoscaler::CrossVersionObjectReference;
use crate::go_json::{null_as_default, omitempty};

/// One metric in the v1 annotation form: `type` names the source and exactly the
/// field of that name is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct MetricSpec {
    /// The source: `Object`, `Pods`, `Resource`, `ContainerResource` or `External`.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 1)]
    pub type_: String,
    /// A metric describing one other object of the namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub object: Option<ObjectMetricSource>,
    /// A custom metric averaged over the target's pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub pods: Option<PodsMetricSource>,
    /// A compute resource of the target's pods, summed over their containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub resource: Option<ResourceMetricSource>,
    /// A compute resource of one named container of each pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub container_resource: Option<ContainerResourceMetricSource>,
    /// A metric from outside the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub external: Option<ExternalMetricSource>,
}

/// A metric of another object, v1 form: the target is a total unless
/// `averageValue` is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMetricSource {
    /// The object the metric is about.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 1)]
    pub target: CrossVersionObjectReference,
    /// Name of the metric.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub metric_name: String,
    /// The metric's total value to aim for.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub target_value: Quantity,
    /// Labels of the series to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub selector: Option<LabelSelector>,
    /// The metric's value divided by the number of pods to aim for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub average_value: Option<Quantity>,
}

/// A custom per-pod metric, v1 form.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodsMetricSource {
    /// Name of the metric.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub metric_name: String,
    /// The per-pod average to aim for.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub target_average_value: Quantity,
    /// Labels of the series to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub selector: Option<LabelSelector>,
}

/// A compute resource of the target's pods, v1 form: a utilization or an
/// average value target.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ResourceMetricSource {
    /// The resource, e.g. `cpu`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Percent of the pods' requests to aim for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub target_average_utilization: Option<i32>,
    /// Per-pod average usage to aim for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub target_average_value: Option<Quantity>,
}

/// A compute resource of one container of each pod, v1 form.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ContainerResourceMetricSource {
    /// The resource, e.g. `cpu`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Percent of the container's request to aim for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub target_average_utilization: Option<i32>,
    /// Per-pod average usage to aim for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub target_average_value: Option<Quantity>,
    /// Name of the container whose usage counts.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 5)]
    pub container: String,
}

/// A metric from outside the cluster, v1 form: a total or a per-pod average
/// target.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ExternalMetricSource {
    /// Name of the metric.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub metric_name: String,
    /// Labels of the series to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub metric_selector: Option<LabelSelector>,
    /// The metric's total value to aim for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub target_value: Option<Quantity>,
    /// The metric's value divided by the number of pods to aim for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub target_average_value: Option<Quantity>,
}

/// The last measurement of one metric, v1 annotation form.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct MetricStatus {
    /// The source: `Object`, `Pods`, `Resource`, `ContainerResource` or `External`.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 1)]
    pub type_: String,
    /// Measurement of an object metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub object: Option<ObjectMetricStatus>,
    /// Measurement of a per-pod custom metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub pods: Option<PodsMetricStatus>,
    /// Measurement of a pod resource metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub resource: Option<ResourceMetricStatus>,
    /// Measurement of a container resource metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub container_resource: Option<ContainerResourceMetricStatus>,
    /// Measurement of an external metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub external: Option<ExternalMetricStatus>,
}

/// One condition of an autoscaler, as the v1 `conditions` annotation lists it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscalerCondition {
    /// `AbleToScale`, `ScalingActive` or `ScalingLimited`.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub status: String,
    /// When the status last changed.
    #[serde(default)]
    #[api(proto = 3, proto_value)]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub reason: Option<String>,
    /// Human-readable detail of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub message: Option<String>,
}

/// The measured value of an object metric, v1 form.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMetricStatus {
    /// The object the metric is about.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 1)]
    pub target: CrossVersionObjectReference,
    /// Name of the metric.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub metric_name: String,
    /// The metric's measured total.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub current_value: Quantity,
    /// Labels of the series used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub selector: Option<LabelSelector>,
    /// The measured total divided by the number of pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub average_value: Option<Quantity>,
}

/// The measured per-pod average of a custom metric, v1 form.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodsMetricStatus {
    /// Name of the metric.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub metric_name: String,
    /// The measured per-pod average.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub current_average_value: Quantity,
    /// Labels of the series used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub selector: Option<LabelSelector>,
}

/// The measured usage of a compute resource of the target's pods, v1 form.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ResourceMetricStatus {
    /// The resource, e.g. `cpu`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Usage as a percent of the pods' requests, when they set requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub current_average_utilization: Option<i32>,
    /// The measured per-pod average usage.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub current_average_value: Quantity,
}

/// The measured usage of a compute resource of one container per pod, v1 form.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ContainerResourceMetricStatus {
    /// The resource, e.g. `cpu`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Usage as a percent of the container's request, when it sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub current_average_utilization: Option<i32>,
    /// The measured per-pod average usage.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub current_average_value: Quantity,
    /// Name of the container measured.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 4)]
    pub container: String,
}

/// The measured value of an external metric, v1 form.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ExternalMetricStatus {
    /// Name of the metric.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub metric_name: String,
    /// Labels of the series used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub metric_selector: Option<LabelSelector>,
    /// The metric's measured total.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub current_value: Quantity,
    /// The measured total divided by the number of pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub current_average_value: Option<Quantity>,
}
