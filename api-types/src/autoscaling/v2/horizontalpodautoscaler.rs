//! HorizontalPodAutoscalers (autoscaling/v2): replica counts driven by metrics,
//! with per-direction scaling rules.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::metric::{MetricSpec, MetricStatus, MetricValueStatus};
use crate::go_json::{null_as_default, omitempty};

/// Adjusts the replica count of a scalable object (a Deployment, a
/// StatefulSet...) through its `/scale` subresource so that the observed
/// metrics stay at their targets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[api(defaults = crate::autoscaling::defaults::default_v2)]
#[resource(
    group = "autoscaling",
    version = "v2",
    plural = "horizontalpodautoscalers",
    storage_prefix = "horizontalpodautoscalers",
    short_names("hpa"),
    categories("all"),
    status,
    generation = false,
    printer_column(name = "Reference", type = "string", json_path = ".spec.scaleTargetRef",
        description = "Kind and name of the scaled object."),
    printer_column(name = "Targets", type = "string", json_path = ".spec.metrics",
        description = "Current and target value of the first metrics."),
    printer_column(name = "MinPods", type = "string", json_path = ".spec.minReplicas",
        description = "Lowest replica count allowed."),
    printer_column(name = "MaxPods", type = "integer", json_path = ".spec.maxReplicas",
        description = "Highest replica count allowed."),
    printer_column(name = "Replicas", type = "integer", json_path = ".status.currentReplicas",
        description = "Replica count the autoscaler last saw."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the autoscaler was created."),
    table_cells = hpa_cells,
    validate_update = super::validation::validate_hpa_update
)]
pub struct HorizontalPodAutoscaler {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// What to scale, within which bounds, on which metrics and how fast.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: HorizontalPodAutoscalerSpec,
    /// What the autoscaler last measured and decided.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: HorizontalPodAutoscalerStatus,
}

/// The desired behaviour of an autoscaler.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_hpa_spec)]
pub struct HorizontalPodAutoscalerSpec {
    /// The object whose replica count is set (it must serve `/scale`).
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 1)]
    pub scale_target_ref: CrossVersionObjectReference,
    /// Fewest replicas to scale down to; 1 when unset (0 only with the
    /// HPAScaleToZero feature and an object or external metric).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub min_replicas: Option<i32>,
    /// Most replicas to scale up to; at least `minReplicas`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub max_replicas: i32,
    /// The metrics to follow; each proposes a replica count and the highest
    /// wins. Defaults to 80% average CPU utilization.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub metrics: Option<Vec<MetricSpec>>,
    /// Scaling rules for each direction; the controller's defaults when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub behavior: Option<HorizontalPodAutoscalerBehavior>,
}

/// Names the scaled object, in the autoscaler's namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
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

/// How fast the autoscaler may scale up and down.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscalerBehavior {
    /// Rules for adding replicas; by default the most of 4 pods or 100% per
    /// 15 s, with no stabilization window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub scale_up: Option<HPAScalingRules>,
    /// Rules for removing replicas; by default up to 100% per 15 s after a
    /// 300 s stabilization window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub scale_down: Option<HPAScalingRules>,
}

/// The rate limits of one scaling direction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct HPAScalingRules {
    /// Seconds of past recommendations considered before acting, smoothing out
    /// flapping metrics (0 to 3600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub stabilization_window_seconds: Option<i32>,
    /// Which policy applies when several do: `Max` (the default), `Min`, or
    /// `Disabled` (no scaling in this direction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub select_policy: Option<String>,
    /// The allowed changes per period; `selectPolicy` picks among them.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub policies: Option<Vec<HPAScalingPolicy>>,
}

/// One allowed change: at most `value` pods or percent per `periodSeconds`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct HPAScalingPolicy {
    /// `Pods` (an absolute count) or `Percent` (of the current replicas).
    #[serde(default, rename = "type")]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub type_: String,
    /// The size of the change allowed; greater than zero.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub value: i32,
    /// Length in seconds of the window the change applies to (1 to 1800).
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub period_seconds: i32,
}

/// What the autoscaler last observed and decided.
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
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub current_replicas: Option<i32>,
    /// Replicas the autoscaler last computed as needed.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 4)]
    pub desired_replicas: i32,
    /// The last measurement of each metric; null before the first one.
    #[serde(default)]
    #[api(list_type = "atomic")]
    #[api(proto = 5)]
    pub current_metrics: Option<Vec<MetricStatus>>,
    /// Conditions such as `AbleToScale`, `ScalingActive` and `ScalingLimited`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("type"),
        patch_strategy = "merge",
        patch_merge_key = "type"
    )]
    #[api(proto = 6)]
    pub conditions: Option<Vec<HorizontalPodAutoscalerCondition>>,
}

/// One condition of an autoscaler.
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

/// The `kubectl get hpa` row (kube-apiserver's `printHorizontalPodAutoscaler`).
fn hpa_cells(hpa: &HorizontalPodAutoscaler) -> Vec<Value> {
    let spec = &hpa.spec;
    let target = &spec.scale_target_ref;
    let min_pods = spec
        .min_replicas
        .map_or_else(|| "<unset>".to_owned(), |n| n.to_string());
    vec![
        json!(format!("{}/{}", target.kind, target.name)),
        json!(format_metrics(
            spec.metrics.as_deref().unwrap_or_default(),
            hpa.status.current_metrics.as_deref().unwrap_or_default(),
        )),
        json!(min_pods),
        json!(spec.max_replicas),
        json!(hpa.status.current_replicas.unwrap_or(0)),
        json!(hpa.metadata.creation_timestamp.map(|t| t.to_string())),
    ]
}

/// The Targets cell: `current/target` of the first two metrics, then how many
/// more there are.
pub(crate) fn format_metrics(specs: &[MetricSpec], statuses: &[MetricStatus]) -> String {
    const SHOWN: usize = 2;
    if specs.is_empty() {
        return "<none>".to_owned();
    }
    let cells: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| metric_cell(spec, statuses.get(i)))
        .collect();
    let shown = cells[..cells.len().min(SHOWN)].join(", ");
    if cells.len() > SHOWN {
        format!("{shown} + {} more...", cells.len() - SHOWN)
    } else {
        shown
    }
}

/// Go prints a missing quantity pointer as `<nil>`.
fn quantity(q: Option<&kapi_runtime::Quantity>) -> String {
    q.map_or_else(|| "<nil>".to_owned(), |q| q.0.clone())
}

/// `current/target` of one metric, prefixed with the resource name for
/// resource metrics and suffixed with ` (avg)` for averaged object and
/// external metrics.
fn metric_cell(spec: &MetricSpec, status: Option<&MetricStatus>) -> String {
    const UNKNOWN: &str = "<unknown>";
    let percent = |p: Option<i32>| p.map(|p| format!("{p}%"));
    // A value or an average of an object or external metric.
    let value_or_average = |target: &super::metric::MetricTarget,
                            current: Option<&MetricValueStatus>| {
        match &target.average_value {
            Some(average) => {
                let current = current
                    .and_then(|c| c.average_value.as_ref())
                    .map_or_else(|| UNKNOWN.to_owned(), |q| q.0.clone());
                format!("{current}/{} (avg)", average.0)
            }
            None => {
                let current =
                    current.map_or_else(|| UNKNOWN.to_owned(), |c| quantity(c.value.as_ref()));
                format!("{current}/{}", quantity(target.value.as_ref()))
            }
        }
    };
    // A resource metric of the pods or of one container.
    let resource =
        |name: &str, target: &super::metric::MetricTarget, current: Option<&MetricValueStatus>| {
            match &target.average_value {
                Some(average) => {
                    let current = current.map_or_else(
                        || UNKNOWN.to_owned(),
                        |c| quantity(c.average_value.as_ref()),
                    );
                    format!("{name}: {current}/{}", average.0)
                }
                None => {
                    let current = current
                        .and_then(|c| percent(c.average_utilization))
                        .unwrap_or_else(|| UNKNOWN.to_owned());
                    let target =
                        percent(target.average_utilization).unwrap_or_else(|| "<auto>".to_owned());
                    format!("{name}: {current}/{target}")
                }
            }
        };
    let default = super::metric::MetricTarget::default();
    match spec.type_.as_str() {
        "External" => {
            let target = spec.external.as_ref().map_or(&default, |e| &e.target);
            let current = status.and_then(|s| s.external.as_ref()).map(|e| &e.current);
            value_or_average(target, current)
        }
        "Pods" => {
            let target = spec.pods.as_ref().map_or(&default, |p| &p.target);
            let current = status.and_then(|s| s.pods.as_ref()).map_or_else(
                || UNKNOWN.to_owned(),
                |p| quantity(p.current.average_value.as_ref()),
            );
            format!("{current}/{}", quantity(target.average_value.as_ref()))
        }
        "Object" => {
            let target = spec.object.as_ref().map_or(&default, |o| &o.target);
            let current = status.and_then(|s| s.object.as_ref()).map(|o| &o.current);
            value_or_average(target, current)
        }
        "Resource" => {
            let (name, target) = spec
                .resource
                .as_ref()
                .map_or(("", &default), |r| (r.name.as_str(), &r.target));
            let current = status.and_then(|s| s.resource.as_ref()).map(|r| &r.current);
            resource(name, target, current)
        }
        "ContainerResource" => {
            let (name, target) = spec
                .container_resource
                .as_ref()
                .map_or(("", &default), |r| (r.name.as_str(), &r.target));
            let current = status
                .and_then(|s| s.container_resource.as_ref())
                .map(|r| &r.current);
            resource(name, target, current)
        }
        _ => "<unknown type>".to_owned(),
    }
}
