//! Volume sources only persistent volumes have: the cluster-scoped variants of
//! pod volume sources (their Secrets named with a namespace), local disks and
//! CSI volumes managed by an external driver.

use std::collections::BTreeMap;

use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

use crate::core::v1::reference::ObjectReference;
use crate::core::v1::secret_reference::SecretReference;
use crate::go_json::{null_as_default, omitempty};

/// A GlusterFS volume backing a persistent volume (removed driver).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct GlusterfsPersistentVolumeSource {
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
    /// Namespace of the Endpoints object; the claim's namespace when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub endpoints_namespace: Option<String>,
}

/// A Ceph RBD image backing a persistent volume (deprecated in-tree driver).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct RBDPersistentVolumeSource {
    /// Ceph monitor addresses.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required, list_type = "atomic")]
    #[api(proto = 1)]
    pub monitors: Vec<String>,
    /// Name of the image.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub image: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub fs_type: Option<String>,
    /// RADOS pool; `rbd` when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    #[api(default = "rbd")]
    pub pool: Option<String>,
    /// RADOS user; `admin` when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    #[api(default = "admin")]
    pub user: Option<String>,
    /// Keyring file of the user; `/etc/ceph/keyring` when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    #[api(default = "/etc/ceph/keyring")]
    pub keyring: Option<String>,
    /// Secret with the user's key, instead of the keyring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub secret_ref: Option<SecretReference>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 8)]
    pub read_only: Option<bool>,
}

/// An iSCSI disk backing a persistent volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ISCSIPersistentVolumeSource {
    /// Target portal, `ip` or `ip:port` (port 3260 by default).
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub target_portal: String,
    /// iSCSI qualified name of the target.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub iqn: String,
    /// Logical unit number.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub lun: i32,
    /// iSCSI interface to use; `default` (TCP) when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    #[api(default = "default")]
    pub iscsi_interface: Option<String>,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub read_only: Option<bool>,
    /// More target portals for multipath.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 7)]
    pub portals: Option<Vec<String>>,
    /// Use CHAP authentication for discovery.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 8)]
    pub chap_auth_discovery: Option<bool>,
    /// Use CHAP authentication for the session.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 11)]
    pub chap_auth_session: Option<bool>,
    /// Secret with the CHAP credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10)]
    pub secret_ref: Option<SecretReference>,
    /// Initiator name, creating a new interface `<portal>:<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 12)]
    pub initiator_name: Option<String>,
}

/// An OpenStack Cinder volume backing a persistent volume (deprecated in-tree
/// driver).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CinderPersistentVolumeSource {
    /// ID of the volume.
    #[serde(default, rename = "volumeID")]
    #[api(required)]
    #[api(proto = 1)]
    pub volume_id: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub read_only: Option<bool>,
    /// Secret with the OpenStack credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub secret_ref: Option<SecretReference>,
}

/// A CephFS mount backing a persistent volume (deprecated in-tree driver).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CephFSPersistentVolumeSource {
    /// Ceph monitor addresses.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required, list_type = "atomic")]
    #[api(proto = 1)]
    pub monitors: Vec<String>,
    /// Path inside the filesystem to mount; `/` when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub path: Option<String>,
    /// RADOS user; `admin` when empty.
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
    pub secret_ref: Option<SecretReference>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub read_only: Option<bool>,
}

/// A volume of an exec-based FlexVolume driver backing a persistent volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct FlexPersistentVolumeSource {
    /// Name of the driver.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub driver: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub fs_type: Option<String>,
    /// Secret passed to the driver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub secret_ref: Option<SecretReference>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub read_only: Option<bool>,
    /// Driver-specific options.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub options: Option<BTreeMap<String, String>>,
}

/// An Azure File share backing a persistent volume (deprecated in-tree driver).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct AzureFilePersistentVolumeSource {
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
    /// Namespace of the Secret; the pod's namespace when unset (written as
    /// `null` then).
    #[serde(default)]
    #[api(proto = 4)]
    pub secret_namespace: Option<String>,
}

/// A ScaleIO volume backing a persistent volume (removed driver).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ScaleIOPersistentVolumeSource {
    /// Address of the ScaleIO API gateway.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub gateway: String,
    /// Name of the storage system.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub system: String,
    /// Secret with the ScaleIO credentials (written as `null` when unset).
    #[serde(default)]
    #[api(proto = 3)]
    #[api(required)]
    pub secret_ref: Option<SecretReference>,
    /// Talk to the gateway over TLS.
    #[serde(default, rename = "sslEnabled", skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub ssl_enabled: Option<bool>,
    /// Protection domain of the storage.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub protection_domain: Option<String>,
    /// Storage pool of the protection domain.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub storage_pool: Option<String>,
    /// `ThickProvisioned` or `ThinProvisioned` (the default).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 7)]
    #[api(default = "ThinProvisioned")]
    pub storage_mode: Option<String>,
    /// Name of an existing volume.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 8)]
    pub volume_name: Option<String>,
    /// Filesystem type; `xfs` when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 9)]
    #[api(default = "xfs")]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 10)]
    pub read_only: Option<bool>,
}

/// A StorageOS volume backing a persistent volume (removed driver).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct StorageOSPersistentVolumeSource {
    /// Name of the volume within its StorageOS namespace.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub volume_name: Option<String>,
    /// StorageOS namespace; the pod's namespace when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub volume_namespace: Option<String>,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub read_only: Option<bool>,
    /// Secret with the StorageOS API credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub secret_ref: Option<ObjectReference>,
}

/// A disk, partition or directory of one node, mounted directly (local
/// persistent volumes need a node affinity).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct LocalVolumeSource {
    /// Absolute path of the disk, partition or directory on the node.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub path: String,
    /// Filesystem type for a block device, e.g. `ext4`; detected when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub fs_type: Option<String>,
}

/// A volume of an external CSI driver.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CSIPersistentVolumeSource {
    /// Name of the CSI driver, as it registers itself.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub driver: String,
    /// The driver's identifier of the volume, passed to every CSI call.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub volume_handle: String,
    /// Publish the volume read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub read_only: Option<bool>,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub fs_type: Option<String>,
    /// Driver-specific attributes of the volume, passed to the publish calls.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub volume_attributes: Option<BTreeMap<String, String>>,
    /// Secret passed to ControllerPublishVolume and ControllerUnpublishVolume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6)]
    pub controller_publish_secret_ref: Option<SecretReference>,
    /// Secret passed to NodeStageVolume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub node_stage_secret_ref: Option<SecretReference>,
    /// Secret passed to NodePublishVolume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub node_publish_secret_ref: Option<SecretReference>,
    /// Secret passed to ControllerExpandVolume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    pub controller_expand_secret_ref: Option<SecretReference>,
    /// Secret passed to NodeExpandVolume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10)]
    pub node_expand_secret_ref: Option<SecretReference>,
}
