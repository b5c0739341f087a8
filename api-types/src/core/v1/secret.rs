//! Secrets: confidential data such as passwords, tokens and keys.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::ByteString;
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::omitempty;

/// Confidential data by key. Values are bytes (base64 on the wire); `stringData`
/// accepts plain text on write.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "secrets",
    generation = false,
    selectable_fields("type"),
    printer_column(name = "Type", type = "string", json_path = ".type",
        description = "Type of the secret, e.g. Opaque or kubernetes.io/tls."),
    printer_column(name = "Data", type = "integer", json_path = ".data",
        description = "Number of keys."),
    // Folded while defaulting (before the field manager records the
    // writer's fields: `f:data`, as upstream's conversion into its internal
    // Secret folds it) and again before every write.
    prepare = fold_string_data,
    table_cells = secret_cells,
    validate_update = super::validation::validate_secret_update,
    warnings = super::validation::secret_warnings
)]
#[api(validate = super::validation::validate_secret)]
#[api(defaults = fold_string_data)]
pub struct Secret {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// When true, `data` can no longer change (only deletion and metadata changes
    /// are allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub immutable: Option<bool>,
    /// Values by key, base64-encoded on the wire; keys are letters, digits, `-`,
    /// `_` or `.`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub data: Option<BTreeMap<String, ByteString>>,
    /// Write-only convenience: plain-text values merged into `data` (winning over
    /// the same key there); never returned.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub string_data: Option<BTreeMap<String, String>>,
    /// How the data is meant to be used, e.g. `Opaque`,
    /// `kubernetes.io/dockerconfigjson` or `kubernetes.io/tls`; some types require
    /// certain keys.
    #[serde(default, rename = "type", skip_serializing_if = "omitempty")]
    #[api(default = "Opaque")]
    #[api(proto = 3)]
    pub type_: Option<String>,
}

/// `stringData` is folded into `data` on every write and then dropped, as the
/// conversion of v1 Secrets into Kubernetes' internal form does.
fn fold_string_data(secret: &mut Secret) {
    let Some(strings) = secret.string_data.take() else {
        return;
    };
    if strings.is_empty() {
        return;
    }
    let data = secret.data.get_or_insert_with(BTreeMap::new);
    for (key, value) in strings {
        data.insert(key, ByteString(value.into_bytes()));
    }
}

/// Type and number of keys.
fn secret_cells(secret: &Secret) -> Vec<Value> {
    let keys = secret.data.as_ref().map_or(0, BTreeMap::len);
    vec![
        json!(secret.type_.as_deref().unwrap_or_default()),
        json!(keys),
    ]
}
