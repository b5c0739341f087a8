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
    /// The object (or its PartialObjectMetadata), as `includeObject` asks;
    /// `null` for `includeObject=None` (Go's RawExtension is never omitted).
    #[serde(default)]
    pub object: Option<serde_json::Value>,
}

/// A duration as kubectl prints ages and durations (apimachinery's
/// `duration.HumanDuration`): `90s`, `2m30s`, `10m`, `3h5m`, `24h`, `3d1h`,
/// `100d`, `2y30d`.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let days = (hours / 24) % 365;
        return if days == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{days}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}
