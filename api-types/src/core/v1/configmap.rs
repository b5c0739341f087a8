//! ConfigMaps: non-confidential configuration for pods.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::ByteString;
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::omitempty;

/// Configuration data, as text or bytes per key, that pods consume as
/// environment variables, command arguments or files.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "configmaps",
    short_names("cm"),
    generation = false,
    printer_column(name = "Data", type = "integer", json_path = ".data",
        description = "Number of keys, text and binary."),
    table_cells = configmap_cells,
    validate_update = super::validation::validate_config_map_update
)]
#[api(validate = super::validation::validate_config_map)]
pub struct ConfigMap {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// When true, `data` and `binaryData` can no longer change (only deletion
    /// and metadata changes are allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub immutable: Option<bool>,
    /// UTF-8 values by key; keys are letters, digits, `-`, `_` or `.`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub data: Option<BTreeMap<String, String>>,
    /// Binary values by key, base64 on the wire; keys may not repeat `data`'s.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub binary_data: Option<BTreeMap<String, ByteString>>,
}

/// The Data column counts text and binary keys alike.
fn configmap_cells(cm: &ConfigMap) -> Vec<Value> {
    let text = cm.data.as_ref().map_or(0, BTreeMap::len);
    let binary = cm.binary_data.as_ref().map_or(0, BTreeMap::len);
    vec![json!(text + binary)]
}
