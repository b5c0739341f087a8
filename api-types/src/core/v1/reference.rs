//! References from one object to another.

use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

use crate::go_json::omitempty;

/// Points at any object of the API, or at a part of one (`fieldPath`); events
/// use it to say what they are about.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct ObjectReference {
    /// Kind of the object, e.g. `Pod`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub kind: Option<String>,
    /// Namespace of the object; empty for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub namespace: Option<String>,
    /// Name of the object.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub name: Option<String>,
    /// UID of the object, pinning one incarnation of the name.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub uid: Option<String>,
    /// `group/version` of the object.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub api_version: Option<String>,
    /// The resourceVersion the reference was made at, if it matters.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub resource_version: Option<String>,
    /// A part of the object, e.g. `spec.containers{web}` for one container.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 7)]
    pub field_path: Option<String>,
}

/// Names an object in the same namespace as the referring object; the kind is
/// fixed by the field holding the reference.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct LocalObjectReference {
    /// Name of the object.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub name: Option<String>,
}

/// Names an object of any kind in the same namespace, by API group, kind and name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct TypedLocalObjectReference {
    /// API group of the object; null for the core group.
    #[serde(default)]
    #[api(proto = 1)]
    pub api_group: Option<String>,
    /// Kind of the object.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub kind: String,
    /// Name of the object.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub name: String,
}

/// Names an object of any kind by API group, kind, name and, optionally, a
/// namespace other than the referrer's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct TypedObjectReference {
    /// API group of the object; null for the core group.
    #[serde(default)]
    #[api(proto = 1)]
    pub api_group: Option<String>,
    /// Kind of the object.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub kind: String,
    /// Name of the object.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub name: String,
    /// Namespace of the object, when it differs from the referrer's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub namespace: Option<String>,
}
