//! DaemonSets: one pod of a template on every eligible node.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{LabelSelector, ObjectMeta, Time};
use kapi_runtime::{ApiType as _, IntOrString};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::v1::pod::PodTemplateSpec;
use crate::core::v1::podtemplate::container_cells;
use crate::go_json::{null_as_default, omitempty};
use crate::labels::{format_labels, format_selector};

/// Runs a copy of a pod on each node that its template's node selector and
/// affinity admit, adding pods as nodes join and removing them as nodes leave.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "apps",
    version = "v1",
    plural = "daemonsets",
    storage_prefix = "daemonsets",
    short_names("ds"),
    categories("all"),
    status,
    printer_column(name = "Desired", type = "integer",
        json_path = ".status.desiredNumberScheduled",
        description = "Nodes that should run the daemon pod."),
    printer_column(name = "Current", type = "integer",
        json_path = ".status.currentNumberScheduled",
        description = "Nodes that should run the daemon pod and run at least one."),
    printer_column(name = "Ready", type = "integer", json_path = ".status.numberReady",
        description = "Nodes that should run the daemon pod and have a ready one."),
    printer_column(name = "Up-to-date", type = "integer",
        json_path = ".status.updatedNumberScheduled",
        description = "Nodes that run a daemon pod of the current template."),
    printer_column(name = "Available", type = "integer", json_path = ".status.numberAvailable",
        description = "Nodes whose daemon pod has been ready for at least minReadySeconds."),
    printer_column(name = "Node Selector", type = "string",
        json_path = ".spec.template.spec.nodeSelector",
        description = "Node labels the template's pods require."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the daemon set was created."),
    printer_column(name = "Containers", type = "string",
        json_path = ".spec.template.spec.containers[*].name", priority = 1,
        description = "Names of the template's containers."),
    printer_column(name = "Images", type = "string",
        json_path = ".spec.template.spec.containers[*].image", priority = 1,
        description = "Images of the template's containers."),
    printer_column(name = "Selector", type = "string", json_path = ".spec.selector", priority = 1,
        description = "Label selector of the daemon set's pods."),
    prepare_create = first_template_generation,
    prepare_update = count_template_generation,
    validate_update = super::validation::validate_daemonset_update,
    warnings = daemonset_warnings,
    table_cells = daemonset_cells
)]
#[api(defaults = super::defaults::default_daemon_set)]
pub struct DaemonSet {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The pod to run and how to roll out changes to it.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: DaemonSetSpec,
    /// Scheduling counts and conditions, as last observed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: DaemonSetStatus,
}

/// The desired state of a daemon set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_daemonset_spec)]
pub struct DaemonSetSpec {
    /// Labels of the pods this daemon set owns; must match the template's labels.
    #[serde(default)]
    #[api(proto = 1)]
    #[api(schema_required)]
    pub selector: Option<LabelSelector>,
    /// The pod to run on each node; its restart policy must be `Always`.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    #[api(required)]
    pub template: PodTemplateSpec,
    /// How pods of an older template are replaced.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub update_strategy: DaemonSetUpdateStrategy,
    /// Seconds a new pod must be ready, without crashing, to count as available.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub min_ready_seconds: Option<i32>,
    /// Old ControllerRevisions kept for rollback; 10 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = 10)]
    #[api(proto = 6)]
    pub revision_history_limit: Option<i32>,
}

/// How a daemon set replaces its pods after a template change.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetUpdateStrategy {
    /// `RollingUpdate` (node by node, the default) or `OnDelete` (only when an
    /// old pod is deleted by hand).
    #[serde(default, rename = "type", skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub type_: Option<String>,
    /// Limits of a rolling update; only with `RollingUpdate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub rolling_update: Option<RollingUpdateDaemonSet>,
}

/// The pace of a daemon set's rolling update.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDaemonSet {
    /// Nodes whose daemon pod may be unavailable at once: a number or a
    /// percentage of the desired nodes (rounded up); 1 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub max_unavailable: Option<IntOrString>,
    /// Nodes that may run an old and a new pod side by side during the update:
    /// a number or a percentage (rounded up); 0 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub max_surge: Option<IntOrString>,
}

/// The observed state of a daemon set, counted in nodes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetStatus {
    /// Nodes that should run the daemon pod and run at least one.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub current_number_scheduled: i32,
    /// Nodes that run the daemon pod but should not.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub number_misscheduled: i32,
    /// Nodes that should run the daemon pod, whether they do or not.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub desired_number_scheduled: i32,
    /// Nodes that should run the daemon pod and have at least one ready.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 4)]
    pub number_ready: i32,
    /// The `metadata.generation` the controller last acted on.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub observed_generation: Option<i64>,
    /// Nodes that run a daemon pod of the current template.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub updated_number_scheduled: Option<i32>,
    /// Nodes whose daemon pod has been ready for at least `minReadySeconds`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 7)]
    pub number_available: Option<i32>,
    /// Nodes that should run the daemon pod but have none available.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 8)]
    pub number_unavailable: Option<i32>,
    /// Counter the controller uses to make ControllerRevision names unique after
    /// a hash collision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    pub collision_count: Option<i32>,
    /// Conditions of the daemon set, one per type.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("type"))]
    #[api(patch_strategy = "merge", patch_merge_key = "type")]
    #[api(proto = 10)]
    pub conditions: Option<Vec<DaemonSetCondition>>,
}

/// One condition of a daemon set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetCondition {
    /// The condition's type.
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

/// The annotation with the generation of a daemon set's template.
pub(super) const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

/// The template generation an annotation says (0 when absent or unreadable).
fn template_generation(ds: &DaemonSet) -> i64 {
    ds.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(TEMPLATE_GENERATION_ANNOTATION))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn set_template_generation(ds: &mut DaemonSet, generation: i64) {
    ds.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(
            TEMPLATE_GENERATION_ANNOTATION.to_owned(),
            generation.to_string(),
        );
}

/// PrepareForCreate: a new daemon set's template is generation 1 (or the one
/// the client gave, if higher).
fn first_template_generation(ds: &mut DaemonSet) {
    let generation = template_generation(ds).max(1);
    set_template_generation(ds, generation);
}

/// PrepareForUpdate: the template generation is the server's: the stored one,
/// plus one when the template changes.
fn count_template_generation(new: &mut DaemonSet, old: &DaemonSet) {
    let mut generation = template_generation(old);
    if !new.spec.template.semantic_eq(&old.spec.template) {
        generation += 1;
    }
    set_template_generation(new, generation);
}

/// The `kubectl get daemonsets` row (kube-apiserver's `printDaemonSet`): unset
/// counts print as 0, the node selector as `k=v` pairs or `<none>`.
fn daemonset_cells(ds: &DaemonSet) -> Vec<Value> {
    let status = &ds.status;
    let pod = &ds.spec.template.spec;
    let (names, images) = container_cells(&pod.containers);
    vec![
        json!(status.desired_number_scheduled),
        json!(status.current_number_scheduled),
        json!(status.number_ready),
        json!(status.updated_number_scheduled.unwrap_or(0)),
        json!(status.number_available.unwrap_or(0)),
        json!(format_labels(pod.node_selector.as_ref())),
        json!(ds.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(names),
        json!(images),
        json!(format_selector(ds.spec.selector.as_ref())),
    ]
}

/// The `Warning` headers of a write: those of the pod template, on create and
/// when the spec changes.
fn daemonset_warnings(d: &DaemonSet, old: Option<&DaemonSet>) -> Vec<String> {
    crate::core::v1::pod::warnings::template_warnings(
        &["spec", "template"],
        Some(&d.spec.template),
        &d.spec,
        old.map(|o| &o.spec),
    )
}
