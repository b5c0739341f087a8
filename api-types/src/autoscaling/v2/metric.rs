//! The metrics an autoscaler scales on: what it targets (`MetricSpec`) and
//! what it last measured (`MetricStatus`), one source kind per variant.

use kapi_codegen::ApiType;
use kapi_runtime::Quantity;
use kapi_runtime::meta::LabelSelector;
use serde::{Deserialize, Serialize};

use super::horizontalpodautoscaler::CrossVersionObjectReference;
use crate::go_json::null_as_default;

/// One metric to scale on: `type` names the source and exactly the field of
/// that name is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct MetricSpec {
    /// The source: `Object`, `Pods`, `Resource`, `ContainerResource` or `External`.
    #[serde(default, rename = "type")]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub type_: String,
    /// A metric describing one other object of the namespace (`type: Object`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub object: Option<ObjectMetricSource>,
    /// A custom metric averaged over the target's pods (`type: Pods`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub pods: Option<PodsMetricSource>,
    /// A compute resource (CPU, memory) of the target's pods, summed over
    /// their containers (`type: Resource`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub resource: Option<ResourceMetricSource>,
    /// A compute resource of one named container of each pod
    /// (`type: ContainerResource`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub container_resource: Option<ContainerResourceMetricSource>,
    /// A metric from outside the cluster, e.g. a queue length (`type: External`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub external: Option<ExternalMetricSource>,
}

/// A metric of another Kubernetes object (an Ingress's request rate...).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMetricSource {
    /// The object the metric is about.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 1)]
    pub described_object: CrossVersionObjectReference,
    /// The value to hold the metric at: `Value` or `AverageValue`.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub target: MetricTarget,
    /// Name and selector of the metric.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 3)]
    pub metric: MetricIdentifier,
}

/// A custom metric reported per pod of the target and averaged across them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodsMetricSource {
    /// Name and selector of the metric.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 1)]
    pub metric: MetricIdentifier,
    /// The per-pod value to hold the metric at; only `AverageValue` applies.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub target: MetricTarget,
}

/// A compute resource, as the kubelet reports it, of the target's pods: their
/// containers' usage summed per pod, then averaged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ResourceMetricSource {
    /// The resource, e.g. `cpu` or `memory`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub name: String,
    /// `Utilization` (percent of the pods' requests) or `AverageValue`.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub target: MetricTarget,
}

/// A compute resource of one container of each of the target's pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ContainerResourceMetricSource {
    /// The resource, e.g. `cpu` or `memory`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub name: String,
    /// `Utilization` (percent of the container's request) or `AverageValue`.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub target: MetricTarget,
    /// Name of the container whose usage counts.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 3)]
    pub container: String,
}

/// A metric not tied to any object of the cluster, served by an external
/// metrics adapter.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ExternalMetricSource {
    /// Name and selector of the metric.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 1)]
    pub metric: MetricIdentifier,
    /// `Value` (the metric as a whole) or `AverageValue` (divided by the pods).
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub target: MetricTarget,
}

/// Which metric: a name and, for metrics with labels, a selector narrowing
/// the series.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct MetricIdentifier {
    /// The metric's name.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub name: String,
    /// Labels of the series to use; without one, the metrics adapter picks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub selector: Option<LabelSelector>,
}

/// The value a metric should be held at: one of a total, a per-pod average
/// or, for resources, a percentage of the requests.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct MetricTarget {
    /// `Utilization`, `Value` or `AverageValue`: which of the fields below applies.
    #[serde(default, rename = "type")]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub type_: String,
    /// The metric's total value to aim for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub value: Option<Quantity>,
    /// The metric's value divided by the number of pods to aim for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub average_value: Option<Quantity>,
    /// Percent of the pods' resource requests to aim for, averaged over the
    /// pods (resource metrics only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub average_utilization: Option<i32>,
}

/// The last measurement of one metric of the spec: `type` names the source
/// and the field of that name is set.
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

/// The measured value of an object metric.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMetricStatus {
    /// Name and selector of the metric.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 1)]
    pub metric: MetricIdentifier,
    /// What was measured.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub current: MetricValueStatus,
    /// The object the metric is about.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 3)]
    pub described_object: CrossVersionObjectReference,
}

/// The measured per-pod average of a custom pod metric.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodsMetricStatus {
    /// Name and selector of the metric.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 1)]
    pub metric: MetricIdentifier,
    /// What was measured.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub current: MetricValueStatus,
}

/// The measured usage of a compute resource of the target's pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ResourceMetricStatus {
    /// The resource, e.g. `cpu`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// What was measured.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub current: MetricValueStatus,
}

/// The measured usage of a compute resource of one container per pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ContainerResourceMetricStatus {
    /// The resource, e.g. `cpu`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// What was measured.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub current: MetricValueStatus,
    /// Name of the container measured.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub container: String,
}

/// The measured value of an external metric.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ExternalMetricStatus {
    /// Name and selector of the metric.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 1)]
    pub metric: MetricIdentifier,
    /// What was measured.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub current: MetricValueStatus,
}

/// A measured metric value, in whichever of the forms the target uses.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct MetricValueStatus {
    /// The metric's total value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub value: Option<Quantity>,
    /// The metric's value divided by the number of pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub average_value: Option<Quantity>,
    /// Usage as a percent of the pods' requests, averaged over the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub average_utilization: Option<i32>,
}
