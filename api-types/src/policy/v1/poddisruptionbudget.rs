//! PodDisruptionBudgets: how many pods of a set voluntary disruptions (evictions)
//! may take down at once.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::IntOrString;
use kapi_runtime::meta::{LabelSelector, ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::v1::service::status::Condition;
use crate::go_json::{null_as_default, omitempty};

/// Limits evictions of the pods its selector picks, so that a minimum of them
/// stays available (or a maximum unavailable) during drains and similar work.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "policy",
    version = "v1",
    plural = "poddisruptionbudgets",
    storage_prefix = "poddisruptionbudgets",
    short_names("pdb"),
    status,
    printer_column(name = "Min Available", type = "string", json_path = ".spec.minAvailable",
        description = "Pods that must stay available, or N/A."),
    printer_column(name = "Max Unavailable", type = "string", json_path = ".spec.maxUnavailable",
        description = "Pods that may be unavailable, or N/A."),
    printer_column(name = "Allowed Disruptions", type = "integer",
        json_path = ".status.disruptionsAllowed",
        description = "Evictions allowed right now."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the budget was created."),
    table_cells = pdb_cells
)]
pub struct PodDisruptionBudget {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The pods covered and the budget.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: PodDisruptionBudgetSpec,
    /// Healthy pods and allowed disruptions, as last computed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: PodDisruptionBudgetStatus,
}

/// The pods a budget covers and how many may be disrupted. At most one of
/// `minAvailable` and `maxUnavailable` is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_pdb_spec)]
pub struct PodDisruptionBudgetSpec {
    /// Pods that must remain available after an eviction: a number or a
    /// percentage of the expected pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub min_available: Option<IntOrString>,
    /// The pods covered; an empty selector covers every pod of the namespace,
    /// an absent one none. Patches replace it as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(patch_strategy = "replace")]
    #[api(proto = 2)]
    pub selector: Option<LabelSelector>,
    /// Pods that may be unavailable after an eviction: a number or a percentage
    /// of the expected pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub max_unavailable: Option<IntOrString>,
    /// When running but not ready pods may be evicted: `IfHealthyBudget` (only
    /// while the budget holds, the default) or `AlwaysAllow`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub unhealthy_pod_eviction_policy: Option<String>,
}

/// The computed state of a budget.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudgetStatus {
    /// The `metadata.generation` the disruption controller last acted on.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub observed_generation: Option<i64>,
    /// Pods evicted through the API but not yet deleted, by name, with the time
    /// of the eviction; entries expire after about two minutes.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub disrupted_pods: Option<BTreeMap<String, Time>>,
    /// Evictions allowed right now.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub disruptions_allowed: i32,
    /// Covered pods that are healthy now.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 4)]
    pub current_healthy: i32,
    /// Healthy pods the budget requires.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 5)]
    pub desired_healthy: i32,
    /// Pods the budget covers in total, as counted from their controllers.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 6)]
    pub expected_pods: i32,
    /// Conditions such as `DisruptionAllowed`, one per type.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("type"))]
    #[api(patch_strategy = "merge", patch_merge_key = "type")]
    #[api(proto = 7)]
    pub conditions: Option<Vec<Condition>>,
}

/// The `kubectl get poddisruptionbudgets` row (kube-apiserver's
/// `printPodDisruptionBudget`): `N/A` for the unset bound.
fn pdb_cells(pdb: &PodDisruptionBudget) -> Vec<Value> {
    let bound = |value: &Option<IntOrString>| match value {
        Some(IntOrString::Int(n)) => n.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        None => "N/A".to_owned(),
    };
    vec![
        json!(bound(&pdb.spec.min_available)),
        json!(bound(&pdb.spec.max_unavailable)),
        json!(pdb.status.disruptions_allowed),
        json!(pdb.metadata.creation_timestamp.map(|t| t.to_string())),
    ]
}
