use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

/// DeleteOptions: the optional body of a DELETE (or its query parameters).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct DeleteOptions {
    /// `DeleteOptions` when sent as a body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto_skip)]
    pub kind: Option<String>,
    /// `v1` or `meta.k8s.io/v1` when sent as a body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto_skip)]
    pub api_version: Option<String>,
    /// Seconds before the object is deleted; 0 deletes at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub grace_period_seconds: Option<i64>,
    /// Must be fulfilled before deletion, otherwise 409 Conflict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub preconditions: Option<Preconditions>,
    /// Deprecated form of `propagationPolicy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub orphan_dependents: Option<bool>,
    /// `Orphan`, `Background` or `Foreground`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub propagation_policy: Option<String>,
    /// `["All"]` to validate without persisting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(list_type = "atomic")]
    #[api(proto = 5)]
    pub dry_run: Option<Vec<String>>,
    /// Skip unsafe-deletion checks of corrupt objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6)]
    pub ignore_store_read_error_with_cluster_breaking_potential: Option<bool>,
}

/// Preconditions of a delete.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Preconditions {
    /// The object must still have this UID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub uid: Option<String>,
    /// The object must still have this resourceVersion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub resource_version: Option<String>,
}
