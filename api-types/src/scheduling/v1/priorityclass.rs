//! Priority classes: named pod priorities for scheduling and preemption.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::omitempty;

/// Maps a name, which pods give as `priorityClassName`, to an integer priority:
/// higher schedules first and may preempt lower.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "scheduling.k8s.io",
    version = "v1",
    plural = "priorityclasses",
    storage_prefix = "priorityclasses",
    short_names("pc"),
    cluster_scoped,
    printer_column(name = "Value", type = "integer", json_path = ".value",
        description = "Priority that pods of this class get."),
    printer_column(name = "Global-Default", type = "boolean", json_path = ".globalDefault",
        description = "Whether pods without a class get this one."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the priority class was created."),
    printer_column(name = "PreemptionPolicy", type = "string", json_path = ".preemptionPolicy",
        description = "Whether pods of this class may preempt lower-priority pods."),
    table_cells = priorityclass_cells,
    validate_update = super::validation::validate_priority_class_update
)]
#[api(validate = super::validation::validate_priority_class)]
pub struct PriorityClass {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The priority pods of this class get; user classes may use values up to
    /// one billion, larger ones are reserved for system classes.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub value: i32,
    /// Makes this the priority of pods that name no class; at most one class
    /// should set it.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub global_default: Option<bool>,
    /// Free text saying when to use this class.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub description: Option<String>,
    /// `PreemptLowerPriority` (pods may evict lower-priority pods to fit) or
    /// `Never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    #[api(default = "PreemptLowerPriority")]
    pub preemption_policy: Option<String>,
}

/// The `kubectl get priorityclasses` row (kube-apiserver's
/// `printPriorityClass`): an unset global default prints as false.
fn priorityclass_cells(class: &PriorityClass) -> Vec<Value> {
    vec![
        json!(class.value),
        json!(class.global_default.unwrap_or(false)),
        json!(class.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(class.preemption_policy.as_deref().unwrap_or_default()),
    ]
}
