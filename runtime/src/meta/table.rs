use serde::{Deserialize, Serialize};

use super::ListMeta;

/// meta.k8s.io/v1 Table: what `kubectl get` asks for and prints.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Table {
    /// Always `Table`.
    pub kind: String,
    /// Always `meta.k8s.io/v1`.
    pub api_version: String,
    /// List metadata (resourceVersion, continue).
    pub metadata: ListMeta,
    /// The columns, in order.
    pub column_definitions: Vec<TableColumnDefinition>,
    /// One row per object.
    pub rows: Vec<TableRow>,
}

/// One column of a [`Table`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TableColumnDefinition {
    /// Column header.
    pub name: String,
    /// OpenAPI type: `string`, `integer`, `number`, `boolean`, `date`.
    #[serde(rename = "type")]
    pub type_: String,
    /// Optional OpenAPI format, e.g. `name`.
    pub format: String,
    /// What the column means.
    pub description: String,
    /// 0 for the default view, higher for `-o wide`.
    pub priority: i32,
}

/// One row of a [`Table`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TableRow {
    /// One cell per column.
    pub cells: Vec<serde_json::Value>,
    /// The object (or its PartialObjectMetadata), as `includeObject` asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<serde_json::Value>,
}
