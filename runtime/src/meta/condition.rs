use serde::{Deserialize, Serialize};

use super::Time;
use kapi_codegen::ApiType;

use crate::go_json::omitempty;

/// metav1.Condition: the standard condition newer kinds report in their status, a
/// type, a status and when and why it last changed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type in CamelCase, e.g. `Available`.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[api(required, one_of("True", "False", "Unknown"))]
    #[api(proto = 2)]
    pub status: String,
    /// The `metadata.generation` the condition was computed from.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub observed_generation: Option<i64>,
    /// When the status last changed. Written as `null` when unset, as Go writes
    /// its zero time.
    #[serde(default)]
    #[api(proto = 4, proto_value)]
    #[api(schema_required)]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change, in CamelCase.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 5)]
    pub reason: String,
    /// Human-readable detail of the last change; may be empty.
    #[serde(default)]
    #[api(proto = 6)]
    #[api(schema_required)]
    pub message: String,
}
