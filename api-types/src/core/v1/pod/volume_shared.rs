//! Volume sources of shared network filesystems and repositories (deprecated or
//! removed in-tree drivers, kept so that existing manifests still decode).

use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

use crate::core::v1::reference::LocalObjectReference;
use crate::go_json::{null_as_default, omitempty};

/// A git repository cloned into an empty directory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct GitRepoVolumeSource {
    /// Repository URL.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub repository: String,
    /// Commit hash to check out.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub revision: Option<String>,
    /// Directory name to clone into; `.` clones into the volume root.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub directory: Option<String>,
}

/// A GlusterFS volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct GlusterfsVolumeSource {
    /// Name of the Endpoints object listing the Gluster servers.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub endpoints: String,
    /// Gluster volume path.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub path: String,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub read_only: Option<bool>,
}

/// A CephFS mount.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CephFSVolumeSource {
    /// Ceph monitor addresses.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub monitors: Vec<String>,
    /// Path inside the filesystem to mount; `/` when unset.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub path: Option<String>,
    /// RADOS user; `admin` when unset.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub user: Option<String>,
    /// Keyring file of the user.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub secret_file: Option<String>,
    /// Secret with the user's key, instead of the keyring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub secret_ref: Option<LocalObjectReference>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub read_only: Option<bool>,
}

/// A Flocker dataset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct FlockerVolumeSource {
    /// Dataset name (metadata name of the dataset).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub dataset_name: Option<String>,
    /// Dataset UUID.
    #[serde(default, rename = "datasetUUID", skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub dataset_uuid: Option<String>,
}

/// An Azure File share.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct AzureFileVolumeSource {
    /// Secret with the storage account name and key.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub secret_name: String,
    /// Name of the share.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub share_name: String,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub read_only: Option<bool>,
}

/// A Quobyte volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct QuobyteVolumeSource {
    /// Registry services, `host:port` separated by commas.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub registry: String,
    /// Name of an existing Quobyte volume.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub volume: String,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub read_only: Option<bool>,
    /// User the volume is accessed as.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub user: Option<String>,
    /// Group the volume is accessed as.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub group: Option<String>,
    /// Tenant owning the volume.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub tenant: Option<String>,
}
