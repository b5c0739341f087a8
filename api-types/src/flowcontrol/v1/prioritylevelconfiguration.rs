//! PriorityLevelConfigurations: the concurrency shares and queueing of API
//! Priority and Fairness priority levels.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::{null_as_default, omitempty};

/// A priority level: how many requests of the flows sent to it run at once,
/// and what happens to the others.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "flowcontrol.apiserver.k8s.io",
    version = "v1",
    plural = "prioritylevelconfigurations",
    storage_prefix = "prioritylevelconfigurations",
    reset_status = "metadata, spec",
    cluster_scoped,
    status,
    printer_column(name = "Type", type = "string", json_path = ".spec.type",
        description = "Exempt (never limited) or Limited."),
    printer_column(name = "NominalConcurrencyShares", type = "string",
        json_path = ".spec.limited.nominalConcurrencyShares",
        description = "Share of the server's concurrency limit of a limited level."),
    printer_column(name = "Queues", type = "string",
        json_path = ".spec.limited.limitResponse.queuing.queues",
        description = "Number of queues of a queueing level."),
    printer_column(name = "HandSize", type = "string",
        json_path = ".spec.limited.limitResponse.queuing.handSize",
        description = "Queues each flow is shuffle-sharded over."),
    printer_column(name = "QueueLengthLimit", type = "string",
        json_path = ".spec.limited.limitResponse.queuing.queueLengthLimit",
        description = "Requests that may wait in one queue."),
    table_cells = priority_level_cells
)]
#[api(validate = super::validation::validate_priority_level)]
pub struct PriorityLevelConfiguration {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The limits of the level.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: PriorityLevelConfigurationSpec,
    /// Conditions of the level, as last observed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: PriorityLevelConfigurationStatus,
}

/// The desired behaviour of a priority level: exempt from limits, or limited as
/// `limited` says.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PriorityLevelConfigurationSpec {
    /// `Exempt` (requests are never queued or limited) or `Limited`.
    #[serde(default, rename = "type")]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub type_: String,
    /// The limits of a `Limited` level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub limited: Option<LimitedPriorityLevelConfiguration>,
    /// The settings of an `Exempt` level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub exempt: Option<ExemptPriorityLevelConfiguration>,
}

/// The concurrency of a limited level, and what happens to requests beyond it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct LimitedPriorityLevelConfiguration {
    /// The level's share of the server's concurrency limit, relative to the
    /// other limited levels' shares; 30 when unset, 0 allowed. Go writes `null`
    /// when unset.
    #[serde(default)]
    #[api(proto = 1)]
    #[api(default = 30)]
    pub nominal_concurrency_shares: Option<i32>,
    /// What happens to requests that cannot run yet.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub limit_response: LimitResponse,
    /// Percentage of the level's nominal concurrency other levels may borrow,
    /// 0 to 100; 0 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    #[api(default = 0)]
    pub lendable_percent: Option<i32>,
    /// Most the level may borrow from others, as a percentage of its nominal
    /// concurrency; no limit when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub borrowing_limit_percent: Option<i32>,
}

/// The concurrency settings of an exempt level, which only matter for
/// borrowing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ExemptPriorityLevelConfiguration {
    /// The level's share of the server's concurrency limit; 0 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    #[api(default = 0)]
    pub nominal_concurrency_shares: Option<i32>,
    /// Percentage of the level's nominal concurrency other levels may borrow,
    /// 0 to 100; 0 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    #[api(default = 0)]
    pub lendable_percent: Option<i32>,
}

/// What a limited level does with requests it cannot run at once.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct LimitResponse {
    /// `Queue` (wait in queues as `queuing` says) or `Reject` (answer 429 at
    /// once).
    #[serde(default, rename = "type")]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub type_: String,
    /// The queues of type `Queue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub queuing: Option<QueuingConfiguration>,
}

/// The queues of a level, with shuffle sharding of flows over them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::default_queuing)]
pub struct QueuingConfiguration {
    /// Number of queues, at least 1; 64 when unset.
    #[serde(default)]
    #[api(proto = 1)]
    pub queues: i32,
    /// Queues each flow is dealt, at most `queues`; 8 when unset.
    #[serde(default)]
    #[api(proto = 2)]
    pub hand_size: i32,
    /// Requests that may wait in one queue before more are rejected; 50 when
    /// unset.
    #[serde(default)]
    #[api(proto = 3)]
    pub queue_length_limit: i32,
}

/// The observed state of a priority level.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PriorityLevelConfigurationStatus {
    /// Conditions of the level.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("type"))]
    #[api(patch_strategy = "merge", patch_merge_key = "type")]
    #[api(proto = 1)]
    pub conditions: Option<Vec<PriorityLevelConfigurationCondition>>,
}

/// One condition of a priority level.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PriorityLevelConfigurationCondition {
    /// Condition type.
    #[serde(default, rename = "type", skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub type_: Option<String>,
    /// `True`, `False` or `Unknown`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub status: Option<String>,
    /// When the status last changed.
    #[serde(default)]
    #[api(proto = 3, proto_value)]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change, in CamelCase.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub reason: Option<String>,
    /// Human-readable detail of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub message: Option<String>,
}

/// The row of `kubectl get prioritylevelconfigurations`: shares and queue
/// sizes as numbers where the level has them, `<none>` elsewhere.
fn priority_level_cells(level: &PriorityLevelConfiguration) -> Vec<Value> {
    let none = || json!("<none>");
    let limited = level.spec.limited.as_ref();
    // The printer reads the internal type, where unset shares are 0.
    let shares = limited.map_or_else(none, |l| json!(l.nominal_concurrency_shares.unwrap_or(0)));
    let queuing = limited.and_then(|l| l.limit_response.queuing.as_ref());
    let (queues, hand, length) = match queuing {
        Some(q) => (
            json!(q.queues),
            json!(q.hand_size),
            json!(q.queue_length_limit),
        ),
        None => (none(), none(), none()),
    };
    vec![json!(level.spec.type_), shares, queues, hand, length]
}
