//! TokenRequests: the body of `POST .../serviceaccounts/<name>/token`, which
//! mints a service account token.

use kapi_codegen::ApiType;
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};

use crate::go_json::{null_as_default, omitempty};

/// A request for a signed token of the service account named in the URL,
/// for some audiences and lifetime, optionally tied to an object's lifetime;
/// the answer carries the token. Not stored.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct TokenRequest {
    /// `TokenRequest` when sent as a body.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto_skip)]
    pub kind: Option<String>,
    /// `authentication.k8s.io/v1` when sent as a body.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto_skip)]
    pub api_version: Option<String>,
    /// Metadata; the answer names the service account and its namespace.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// Audiences, lifetime and binding of the token asked for.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub spec: TokenRequestSpec,
    /// The minted token and when it expires.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: TokenRequestStatus,
}

/// The token asked for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct TokenRequestSpec {
    /// Audiences the token is meant for; those checking it must find one of
    /// theirs here. Empty means the API server's audiences.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required)]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub audiences: Vec<String>,
    /// Lifetime asked for, in seconds (at least 600); the server may shorten
    /// or, within limits, extend it.
    #[serde(default)]
    #[api(proto = 4)]
    pub expiration_seconds: Option<i64>,
    /// An object the token is tied to: deleting it (or the pod's node)
    /// invalidates the token before it expires.
    #[serde(default)]
    #[api(proto = 3)]
    pub bound_object_ref: Option<BoundObjectReference>,
}

/// The minted token.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct TokenRequestStatus {
    /// The signed token (a JWT), opaque to clients.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub token: String,
    /// When the token stops being valid.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2, proto_value)]
    pub expiration_timestamp: Option<Time>,
}

/// The object a token is bound to: a Pod, Secret or Node of the service
/// account's namespace (Nodes being cluster-wide).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct BoundObjectReference {
    /// Kind of the object: `Pod`, `Secret` or `Node`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub kind: Option<String>,
    /// `group/version` of the object, e.g. `v1`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub api_version: Option<String>,
    /// Name of the object.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub name: Option<String>,
    /// UID of the object, pinning one incarnation of the name.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4, proto_name = "uID")]
    pub uid: Option<String>,
}
