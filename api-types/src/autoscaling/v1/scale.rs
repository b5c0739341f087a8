//! Scale: the body of the `/scale` subresources (deployments, replicasets,
//! statefulsets, replicationcontrollers, custom resources), not stored itself.

use kapi_codegen::ApiType;
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::go_json::{null_as_default, omitempty};

/// The replica count of a scalable object, read and written through its
/// `/scale` subresource; autoscalers and `kubectl scale` use it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Scale {
    /// `Scale` when sent as a body.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto_skip)]
    pub kind: Option<String>,
    /// `autoscaling/v1` when sent as a body.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto_skip)]
    pub api_version: Option<String>,
    /// The scaled object's name, namespace, uid, resourceVersion and creation
    /// time.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The replica count wanted.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: ScaleSpec,
    /// The replica count observed, and which pods count.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: ScaleStatus,
}

/// The desired size of a scalable object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ScaleSpec {
    /// Number of replicas wanted.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub replicas: Option<i32>,
}

/// The observed size of a scalable object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ScaleStatus {
    /// Number of replicas that exist.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub replicas: i32,
    /// Label selector of the object's pods in its string form (`app=web`);
    /// autoscalers use it to find the pods to measure.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub selector: Option<String>,
}
