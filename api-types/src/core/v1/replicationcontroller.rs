//! ReplicationControllers: the original way of keeping a number of pods running.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::pod::PodTemplateSpec;
use super::podtemplate::container_cells;
use crate::go_json::{null_as_default, omitempty};
use crate::labels::format_labels;

/// Keeps a number of pods matching an equality-based selector running, creating
/// them from a template (ReplicaSets and Deployments supersede it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "replicationcontrollers",
    storage_prefix = "controllers",
    orphan_dependents,
    short_names("rc"),
    categories("all"),
    status,
    scale(
        spec_replicas = ".spec.replicas",
        status_replicas = ".status.replicas",
        label_selector = ".spec.selector"
    ),
    selectable_fields("status.replicas"),
    printer_column(name = "Desired", type = "integer", json_path = ".spec.replicas",
        description = "Number of pods wanted."),
    printer_column(name = "Current", type = "integer", json_path = ".status.replicas",
        description = "Number of pods that exist."),
    printer_column(name = "Ready", type = "integer", json_path = ".status.readyReplicas",
        description = "Number of pods that are ready."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the controller was created."),
    printer_column(name = "Containers", type = "string",
        json_path = ".spec.template.spec.containers[*].name", priority = 1,
        description = "Names of the template's containers."),
    printer_column(name = "Images", type = "string",
        json_path = ".spec.template.spec.containers[*].image", priority = 1,
        description = "Images of the template's containers."),
    printer_column(name = "Selector", type = "string", json_path = ".spec.selector", priority = 1,
        description = "Labels of the controller's pods."),
    warnings = replicationcontroller_warnings,
    table_cells = replicationcontroller_cells
)]
#[api(defaults = super::defaults::default_replication_controller)]
pub struct ReplicationController {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The pods wanted.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: ReplicationControllerSpec,
    /// Pod counts and conditions, as last observed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: ReplicationControllerStatus,
}

/// The desired state of a replication controller.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_rc_spec)]
pub struct ReplicationControllerSpec {
    /// Number of pods wanted; 1 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    #[api(default = 1)]
    pub replicas: Option<i32>,
    /// Seconds a new pod must be ready, without crashing, to count as available.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub min_ready_seconds: Option<i32>,
    /// Labels a pod must carry, all of them, to be counted; the template's labels
    /// when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(map_type = "atomic")]
    #[api(proto = 2)]
    pub selector: Option<BTreeMap<String, String>>,
    /// The pods to create when too few match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub template: Option<PodTemplateSpec>,
}

/// The observed state of a replication controller.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ReplicationControllerStatus {
    /// Pods that exist and match the selector.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub replicas: i32,
    /// Pods whose labels match the template's labels.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub fully_labeled_replicas: Option<i32>,
    /// Pods that are ready.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub ready_replicas: Option<i32>,
    /// Pods that have been ready for at least `minReadySeconds`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub available_replicas: Option<i32>,
    /// The `metadata.generation` the controller last acted on.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub observed_generation: Option<i64>,
    /// Conditions, such as `ReplicaFailure`, one per type.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("type"))]
    #[api(patch_strategy = "merge", patch_merge_key = "type")]
    #[api(proto = 6)]
    pub conditions: Option<Vec<ReplicationControllerCondition>>,
}

/// One condition of a replication controller.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ReplicationControllerCondition {
    /// The condition, e.g. `ReplicaFailure`.
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

/// The `kubectl get replicationcontrollers` row (kube-apiserver's
/// `printReplicationController`).
fn replicationcontroller_cells(rc: &ReplicationController) -> Vec<Value> {
    let containers = rc
        .spec
        .template
        .as_ref()
        .map_or(&[][..], |t| &t.spec.containers);
    let (names, images) = container_cells(containers);
    vec![
        json!(rc.spec.replicas.unwrap_or(1)),
        json!(rc.status.replicas),
        json!(rc.status.ready_replicas.unwrap_or(0)),
        json!(rc.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(names),
        json!(images),
        json!(format_labels(rc.spec.selector.as_ref())),
    ]
}

/// The `Warning` headers of a write: those of the pod template, on create and
/// when the spec changes.
fn replicationcontroller_warnings(
    d: &ReplicationController,
    old: Option<&ReplicationController>,
) -> Vec<String> {
    crate::core::v1::pod::warnings::template_warnings(
        &["spec", "template"],
        d.spec.template.as_ref(),
        &d.spec,
        old.map(|o| &o.spec),
    )
}
