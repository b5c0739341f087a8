//! LimitRanges: per-namespace bounds and defaults for compute and storage.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::Quantity;
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::{null_as_default, omitempty};

/// Bounds and defaults that admission applies to the pods, containers and
/// persistent volume claims of a namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "limitranges",
    short_names("limits"),
    generation = false,
    printer_column(name = "Created At", type = "string", json_path = ".metadata.creationTimestamp",
        description = "When the limit range was created, as an RFC 3339 time."),
    table_cells = limitrange_cells
)]
pub struct LimitRange {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The limits enforced.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: LimitRangeSpec,
}

/// The limits of a limit range.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_limit_range_spec)]
pub struct LimitRangeSpec {
    /// One entry per kind of object constrained.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required, list_type = "atomic")]
    #[api(proto = 1)]
    pub limits: Vec<LimitRangeItem>,
}

/// Bounds and defaults for one kind of object, by resource name (`cpu`,
/// `memory`, `storage`, ...).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::default_limit_range_item)]
pub struct LimitRangeItem {
    /// What the entry constrains: `Pod`, `Container` or `PersistentVolumeClaim`.
    #[serde(default, rename = "type")]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub type_: String,
    /// Highest amount allowed per resource.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub max: Option<BTreeMap<String, Quantity>>,
    /// Lowest amount allowed per resource.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub min: Option<BTreeMap<String, Quantity>>,
    /// Limit given to a container that sets none.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub default: Option<BTreeMap<String, Quantity>>,
    /// Request given to a container that sets none.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub default_request: Option<BTreeMap<String, Quantity>>,
    /// Highest limit-to-request ratio allowed per resource.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub max_limit_request_ratio: Option<BTreeMap<String, Quantity>>,
}

/// The `kubectl get limitranges` row: the creation time itself (not an age).
fn limitrange_cells(lr: &LimitRange) -> Vec<Value> {
    vec![json!(lr.metadata.creation_timestamp.map(|t| t.to_string()))]
}
