//! HorizontalPodAutoscalers in their autoscaling/v1 shape: one CPU target.
//! The other metrics, the behavior and the conditions of the v2 shape travel
//! in `autoscaling.alpha.kubernetes.io/*` annotations in this version.

use kapi_codegen::{ApiType, Convert, Resource};
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};

use crate::go_json::{null_as_default, omitempty};

/// Adjusts the replica count of a scalable object through its `/scale`
/// subresource to hold the pods' average CPU utilization at a target. Served
/// from the autoscaling/v2 object (the hub), and printed as v2 prints it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource, Convert)]
#[serde(rename_all = "camelCase")]
#[convert(hub = crate::autoscaling::v2::HorizontalPodAutoscaler, with = super::conversion)]
#[api(defaults = crate::autoscaling::defaults::default_v1)]
#[resource(
    group = "autoscaling",
    version = "v1",
    hub = crate::autoscaling::v2::HorizontalPodAutoscaler,
    plural = "horizontalpodautoscalers",
    storage_prefix = "horizontalpodautoscalers",
    short_names("hpa"),
    categories("all"),
    status,
    generation = false
)]
pub struct HorizontalPodAutoscaler {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// What to scale, within which bounds, and the CPU target.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: HorizontalPodAutoscalerSpec,
    /// What the autoscaler last measured and decided.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: HorizontalPodAutoscalerStatus,
}

/// The desired behaviour of an autoscaler, v1 shape.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscalerSpec {
    /// The object whose replica count is set (it must serve `/scale`).
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 1)]
    pub scale_target_ref: CrossVersionObjectReference,
    /// Fewest replicas to scale down to; 1 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub min_replicas: Option<i32>,
    /// Most replicas to scale up to; at least `minReplicas`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub max_replicas: i32,
    /// Average CPU usage of the pods to aim for, as a percent of their CPU
    /// requests; the controller uses 80 when unset.
    #[serde(
        default,
        rename = "targetCPUUtilizationPercentage",
        skip_serializing_if = "Option::is_none"
    )]
    #[api(proto = 4)]
    pub target_cpu_utilization_percentage: Option<i32>,
}

/// Names the scaled object, in the autoscaler's namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct CrossVersionObjectReference {
    /// Kind of the object, e.g. `Deployment`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub kind: String,
    /// Name of the object.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub name: String,
    /// `group/version` of the object, e.g. `apps/v1`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub api_version: Option<String>,
}

/// What the autoscaler last observed and decided, v1 shape.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscalerStatus {
    /// The `metadata.generation` the autoscaler last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub observed_generation: Option<i64>,
    /// When the replica count was last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub last_scale_time: Option<Time>,
    /// Replicas of the target as last seen.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub current_replicas: i32,
    /// Replicas the autoscaler last computed as needed.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 4)]
    pub desired_replicas: i32,
    /// Average CPU usage of the pods last measured, as a percent of their CPU
    /// requests.
    #[serde(
        default,
        rename = "currentCPUUtilizationPercentage",
        skip_serializing_if = "Option::is_none"
    )]
    #[api(proto = 5)]
    pub current_cpu_utilization_percentage: Option<i32>,
}
