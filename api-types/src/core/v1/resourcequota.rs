//! ResourceQuotas: caps on what a namespace may consume in total.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::Quantity;
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::{null_as_default, omitempty};

/// Caps on the total resources and object counts of a namespace, with the usage
/// the quota controller last computed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "resourcequotas",
    return_deleted_object,
    short_names("quota"),
    generation = false,
    status,
    validate_update = super::validation::validate_quota_update,
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the quota was created."),
    printer_column(name = "Request", type = "string", json_path = ".status.used",
        description = "Used and hard amounts of every resource but limits.*."),
    printer_column(name = "Limit", type = "string", json_path = ".status.hard",
        description = "Used and hard amounts of the limits.* resources."),
    table_cells = resourcequota_cells
)]
pub struct ResourceQuota {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The caps and which objects they count.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: ResourceQuotaSpec,
    /// Caps in force and current usage.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: ResourceQuotaStatus,
}

/// The caps of a quota.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::round_quota_spec)]
#[api(validate = super::validation::validate_quota_spec)]
pub struct ResourceQuotaSpec {
    /// Cap per resource name, e.g. `requests.cpu`, `pods` or `count/configmaps`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub hard: Option<BTreeMap<String, Quantity>>,
    /// Scopes every counted object must match, e.g. `BestEffort` or `NotTerminating`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub scopes: Option<Vec<String>>,
    /// Scope conditions counted objects must match, as expressions; combined
    /// with `scopes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub scope_selector: Option<ScopeSelector>,
}

/// Scope expressions, all of which must hold.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct ScopeSelector {
    /// The expressions, ANDed.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub match_expressions: Option<Vec<ScopedResourceSelectorRequirement>>,
}

/// One scope condition: a scope, an operator and values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ScopedResourceSelectorRequirement {
    /// The scope, e.g. `PriorityClass`, `Terminating` or `CrossNamespacePodAffinity`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub scope_name: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub operator: String,
    /// Values for `In` and `NotIn`; empty for `Exists` and `DoesNotExist`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub values: Option<Vec<String>>,
}

/// The caps in force and the usage measured against them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::round_quota_status)]
#[api(validate = super::validation::validate_quota_status)]
pub struct ResourceQuotaStatus {
    /// Caps being enforced, per resource name.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub hard: Option<BTreeMap<String, Quantity>>,
    /// Usage observed in the namespace, per resource name.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub used: Option<BTreeMap<String, Quantity>>,
}

/// The `kubectl get resourcequotas` row: the age, then `name: used/hard` for
/// every enforced resource, `limits.*` ones in the Limit cell and the others in
/// the Request cell, in name order.
fn resourcequota_cells(quota: &ResourceQuota) -> Vec<Value> {
    let (mut request, mut limit) = (Vec::new(), Vec::new());
    let used = quota.status.used.as_ref();
    for (name, hard) in quota.status.hard.iter().flatten() {
        let used = used.and_then(|u| u.get(name)).map_or("0", |q| q.0.as_str());
        let cell = format!("{name}: {used}/{}", hard.0);
        match name.split_once('.') {
            Some(("limits", _)) => limit.push(cell),
            _ => request.push(cell),
        }
    }
    vec![
        json!(quota.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(request.join(", ")),
        json!(limit.join(", ")),
    ]
}
