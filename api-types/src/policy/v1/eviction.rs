//! Evictions: the body of `POST .../pods/<name>/eviction`, a deletion that
//! PodDisruptionBudgets may refuse.

use kapi_codegen::ApiType;
use kapi_runtime::meta::{DeleteOptions, ObjectMeta};
use serde::{Deserialize, Serialize};

use crate::go_json::omitempty;

/// A request to evict (delete, within disruption budgets) the pod named in its
/// metadata; not stored, only sent to a pod's `eviction` subresource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Eviction {
    /// `Eviction` when sent as a body.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto_skip)]
    pub kind: Option<String>,
    /// `policy/v1` when sent as a body.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto_skip)]
    pub api_version: Option<String>,
    /// Name and namespace of the pod to evict.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// How the pod is deleted (grace period, preconditions, dry run...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub delete_options: Option<DeleteOptions>,
}
