//! Projected and downward API volumes: files made from API data.

use kapi_codegen::ApiType;
use kapi_runtime::meta::LabelSelector;
use serde::{Deserialize, Serialize};

use super::env::{ObjectFieldSelector, ResourceFieldSelector};
use super::volume::KeyToPath;
use crate::go_json::{null_as_default, omitempty};

/// Several sources projected into one directory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ProjectedVolumeSource {
    /// The sources, each writing its files into the directory.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub sources: Vec<VolumeProjection>,
    /// Permission bits of the files (decimal in JSON; `0644` is 420).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = 420)]
    #[api(proto = 2)]
    pub default_mode: Option<i32>,
}

/// One source of a projected volume; exactly one field is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct VolumeProjection {
    /// Keys of a Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub secret: Option<Box<SecretProjection>>,
    /// Fields of the pod.
    #[serde(
        default,
        rename = "downwardAPI",
        skip_serializing_if = "Option::is_none"
    )]
    #[api(proto = 2)]
    pub downward_api: Option<Box<DownwardAPIProjection>>,
    /// Keys of a ConfigMap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub config_map: Option<Box<ConfigMapProjection>>,
    /// A service account token for the pod, rotated by the kubelet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub service_account_token: Option<Box<ServiceAccountTokenProjection>>,
    /// Certificates of ClusterTrustBundle objects as one PEM file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub cluster_trust_bundle: Option<Box<ClusterTrustBundleProjection>>,
}

/// Keys of a ConfigMap in a projected volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(
    field = "localObjectReference",
    number = 1,
    message = "LocalObjectReference"
))]
pub struct ConfigMapProjection {
    /// Name of the ConfigMap.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1, proto_in = "localObjectReference")]
    pub name: Option<String>,
    /// Keys to project, and their paths; every key when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub items: Option<Vec<KeyToPath>>,
    /// Go on even if the ConfigMap or a listed key is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub optional: Option<bool>,
}

/// Keys of a Secret in a projected volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(
    field = "localObjectReference",
    number = 1,
    message = "LocalObjectReference"
))]
pub struct SecretProjection {
    /// Name of the Secret.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1, proto_in = "localObjectReference")]
    pub name: Option<String>,
    /// Keys to project, and their paths; every key when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub items: Option<Vec<KeyToPath>>,
    /// Go on even if the Secret or a listed key is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub optional: Option<bool>,
}

/// Fields of the pod in a projected volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct DownwardAPIProjection {
    /// The files.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub items: Option<Vec<DownwardAPIVolumeFile>>,
}

/// A bound service account token written to a file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccountTokenProjection {
    /// Audience the token is meant for; the API server's when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub audience: Option<String>,
    /// Requested lifetime in seconds (at least 600); the kubelet renews the token
    /// before it expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = 3600)]
    #[api(proto = 2)]
    pub expiration_seconds: Option<i64>,
    /// File path relative to the mount point.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 3)]
    pub path: String,
}

/// Trust anchors from ClusterTrustBundle objects, written as one PEM file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ClusterTrustBundleProjection {
    /// One bundle by name (exclusive with `signerName`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub name: Option<String>,
    /// All bundles of this signer that match `labelSelector`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub signer_name: Option<String>,
    /// Labels of the bundles selected with `signerName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub label_selector: Option<LabelSelector>,
    /// Go on even if no bundle is found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub optional: Option<bool>,
    /// File path relative to the mount point.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 4)]
    pub path: String,
}

/// Fields of the pod as files.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct DownwardAPIVolumeSource {
    /// The files.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub items: Option<Vec<DownwardAPIVolumeFile>>,
    /// Permission bits of the files (decimal in JSON; `0644` is 420).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = 420)]
    #[api(proto = 2)]
    pub default_mode: Option<i32>,
}

/// One file of a downward API volume; `fieldRef` or `resourceFieldRef` is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct DownwardAPIVolumeFile {
    /// Relative file path; may not contain `..`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub path: String,
    /// A field of the pod: metadata name, namespace, uid, labels or annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub field_ref: Option<ObjectFieldSelector>,
    /// A resource limit or request of a container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub resource_field_ref: Option<ResourceFieldSelector>,
    /// Permission bits of this file; the volume's default when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub mode: Option<i32>,
}
