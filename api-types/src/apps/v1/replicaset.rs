//! ReplicaSets: a fixed number of identical pods, kept running.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{LabelSelector, ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::v1::pod::PodTemplateSpec;
use crate::core::v1::podtemplate::container_cells;
use crate::go_json::{null_as_default, omitempty};
use crate::labels::format_selector;

/// Keeps the desired number of pods matching its selector alive, creating pods
/// from its template and deleting surplus ones; Deployments manage them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "apps",
    version = "v1",
    plural = "replicasets",
    storage_prefix = "replicasets",
    short_names("rs"),
    categories("all"),
    status,
    scale(
        spec_replicas = ".spec.replicas",
        status_replicas = ".status.replicas",
        label_selector = ".spec.selector"
    ),
    printer_column(name = "Desired", type = "integer", json_path = ".spec.replicas",
        description = "Number of pods wanted."),
    printer_column(name = "Current", type = "integer", json_path = ".status.replicas",
        description = "Number of pods that exist, as last observed."),
    printer_column(name = "Ready", type = "integer", json_path = ".status.readyReplicas",
        description = "Number of pods that are ready."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the replica set was created."),
    printer_column(name = "Containers", type = "string",
        json_path = ".spec.template.spec.containers[*].name", priority = 1,
        description = "Names of the template's containers."),
    printer_column(name = "Images", type = "string",
        json_path = ".spec.template.spec.containers[*].image", priority = 1,
        description = "Images of the template's containers."),
    printer_column(name = "Selector", type = "string", json_path = ".spec.selector", priority = 1,
        description = "Label selector of the replica set's pods."),
    validate_update = super::validation::validate_replicaset_update,
    warnings = replicaset_warnings,
    table_cells = replicaset_cells
)]
pub struct ReplicaSet {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The desired pods.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: ReplicaSetSpec,
    /// The pods as last observed by the controller.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: ReplicaSetStatus,
}

/// The desired state of a replica set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_replicaset_spec)]
pub struct ReplicaSetSpec {
    /// Number of pods wanted; 1 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = 1)]
    #[api(proto = 1)]
    pub replicas: Option<i32>,
    /// Seconds a new pod must be ready, without crashing, to count as available.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub min_ready_seconds: Option<i32>,
    /// Labels of the pods this replica set counts as its own; must match the
    /// template's labels.
    #[serde(default)]
    #[api(proto = 2)]
    #[api(required)]
    pub selector: Option<LabelSelector>,
    /// The pods to create when too few exist.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub template: PodTemplateSpec,
}

/// The observed state of a replica set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSetStatus {
    /// Pods that exist and match the selector.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub replicas: i32,
    /// Pods whose labels carry every label of the template.
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
    /// Conditions such as `ReplicaFailure`, one per type.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("type"))]
    #[api(patch_strategy = "merge", patch_merge_key = "type")]
    #[api(proto = 6)]
    pub conditions: Option<Vec<ReplicaSetCondition>>,
}

/// One condition of a replica set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSetCondition {
    /// The condition's type, e.g. `ReplicaFailure`.
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

/// The `kubectl get replicasets` row (kube-apiserver's `printReplicaSet`): unset
/// counts print as 0.
fn replicaset_cells(rs: &ReplicaSet) -> Vec<Value> {
    let (names, images) = container_cells(&rs.spec.template.spec.containers);
    vec![
        json!(rs.spec.replicas.unwrap_or(0)),
        json!(rs.status.replicas),
        json!(rs.status.ready_replicas.unwrap_or(0)),
        json!(rs.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(names),
        json!(images),
        json!(format_selector(rs.spec.selector.as_ref())),
    ]
}

/// The `Warning` headers of a write: on create a name that is no DNS label;
/// the pod template's on create and when the spec changes.
fn replicaset_warnings(d: &ReplicaSet, old: Option<&ReplicaSet>) -> Vec<String> {
    let mut warnings: Vec<String> = Vec::new();
    if old.is_none() {
        warnings.extend(super::warnings::pod_name_source_warning(&d.metadata));
    }
    warnings.extend(crate::core::v1::pod::warnings::template_warnings(
        &["spec", "template"],
        Some(&d.spec.template),
        &d.spec,
        old.map(|o| &o.spec),
    ));
    warnings
}
