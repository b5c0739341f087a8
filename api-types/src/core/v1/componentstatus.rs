//! ComponentStatuses: health of the control plane's components (deprecated).

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::omitempty;

/// The health of one control plane component (scheduler, controller manager,
/// an etcd member), probed when read; never stored.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "componentstatuses",
    short_names("cs"),
    verbs("get", "list"),
    age_column = false,
    cluster_scoped,
    generation = false,
    printer_column(name = "Status", type = "string", json_path = ".conditions",
        description = "Healthy, Unhealthy, or Unknown without a Healthy condition."),
    printer_column(name = "Message", type = "string", json_path = ".conditions",
        description = "Message of the Healthy condition."),
    printer_column(name = "Error", type = "string", json_path = ".conditions",
        description = "Error of the Healthy condition."),
    table_cells = componentstatus_cells
)]
pub struct ComponentStatus {
    /// Name of the component and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// Results of the probes, one per condition type.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("type"))]
    #[api(patch_strategy = "merge", patch_merge_key = "type")]
    #[api(proto = 2)]
    pub conditions: Option<Vec<ComponentCondition>>,
}

/// One probe result of a component.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ComponentCondition {
    /// The condition; `Healthy` is the only one.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub status: String,
    /// What the probe reported.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub message: Option<String>,
    /// Error of the probe, when it could not run.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub error: Option<String>,
}

/// The `kubectl get componentstatuses` row, from the `Healthy` condition.
fn componentstatus_cells(cs: &ComponentStatus) -> Vec<Value> {
    let healthy = cs
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "Healthy");
    let Some(healthy) = healthy else {
        return vec![json!("Unknown"), json!(""), json!("")];
    };
    let status = if healthy.status == "True" {
        "Healthy"
    } else {
        "Unhealthy"
    };
    vec![
        json!(status),
        json!(healthy.message.as_deref().unwrap_or_default()),
        json!(healthy.error.as_deref().unwrap_or_default()),
    ]
}
