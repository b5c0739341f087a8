//! References to Secrets in any namespace.

use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

use crate::go_json::omitempty;

/// Names a Secret by name and namespace, for holders that are cluster-scoped
/// (persistent volume sources) and so cannot imply a namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct SecretReference {
    /// Name of the Secret.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub name: Option<String>,
    /// Namespace of the Secret.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub namespace: Option<String>,
}
