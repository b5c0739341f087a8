//! Bindings: requests that assign a pod to a node.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::reference::ObjectReference;
use crate::go_json::null_as_default;

/// A request to bind the pod named in `metadata` to a target, a node; sent to
/// `pods/<name>/binding` or `bindings` by schedulers and never stored itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "bindings",
    verbs("create"),
    generation = false
)]
pub struct Binding {
    /// Name and namespace of the pod to bind.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The node to bind the pod to (kind `Node` and its name).
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub target: ObjectReference,
}
