//! Topology selector terms: label requirements on topology domains, used by
//! storage classes to restrict where volumes may be provisioned.

use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

use crate::go_json::omitempty;

/// A set of topology label requirements that must all hold (they are ANDed);
/// a list of terms matches when any term does.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct TopologySelectorTerm {
    /// The requirements on topology labels.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub match_label_expressions: Option<Vec<TopologySelectorLabelRequirement>>,
}

/// One topology label that must carry one of the listed values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct TopologySelectorLabelRequirement {
    /// The label key, e.g. `topology.kubernetes.io/zone`.
    // Checked as a label name by the StorageClass hook, even when empty.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub key: String,
    /// Accepted values of the label; any one of them matches. Go writes `null`
    /// for an unset list.
    #[serde(default)]
    #[api(required, list_type = "atomic")]
    #[api(proto = 2)]
    pub values: Option<Vec<String>>,
}
