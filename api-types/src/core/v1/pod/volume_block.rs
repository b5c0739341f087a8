//! Volume sources of block devices attached to the node (mostly deprecated
//! in-tree drivers, kept so that existing manifests still decode).

use std::collections::BTreeMap;

use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

use crate::core::v1::reference::LocalObjectReference;
use crate::go_json::{null_as_default, omitempty};

/// A GCE persistent disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct GCEPersistentDiskVolumeSource {
    /// Name of the disk in GCE.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub pd_name: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub fs_type: Option<String>,
    /// Partition to mount; the whole disk when 0.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub partition: Option<i32>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub read_only: Option<bool>,
}

/// An AWS EBS volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct AWSElasticBlockStoreVolumeSource {
    /// ID of the EBS volume.
    #[serde(default, rename = "volumeID")]
    #[api(required)]
    #[api(proto = 1)]
    pub volume_id: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub fs_type: Option<String>,
    /// Partition to mount; the whole volume when 0.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub partition: Option<i32>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub read_only: Option<bool>,
}

/// An iSCSI disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ISCSIVolumeSource {
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
    /// iSCSI interface to use.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "default")]
    #[api(proto = 4)]
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
    pub secret_ref: Option<LocalObjectReference>,
    /// Initiator name, creating a new interface `<portal>:<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 12)]
    pub initiator_name: Option<String>,
}

/// A Ceph RBD image.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct RBDVolumeSource {
    /// Ceph monitor addresses.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(list_type = "atomic")]
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
    /// RADOS pool.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "rbd")]
    #[api(proto = 4)]
    pub pool: Option<String>,
    /// RADOS user.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "admin")]
    #[api(proto = 5)]
    pub user: Option<String>,
    /// Keyring file of the user.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "/etc/ceph/keyring")]
    #[api(proto = 6)]
    pub keyring: Option<String>,
    /// Secret with the user's key, instead of the keyring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub secret_ref: Option<LocalObjectReference>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 8)]
    pub read_only: Option<bool>,
}

/// A volume of an exec-based FlexVolume driver.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct FlexVolumeSource {
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
    pub secret_ref: Option<LocalObjectReference>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub read_only: Option<bool>,
    /// Driver-specific options.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub options: Option<BTreeMap<String, String>>,
}

/// An OpenStack Cinder volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CinderVolumeSource {
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
    pub secret_ref: Option<LocalObjectReference>,
}

/// A Fibre Channel disk, by target WWNs and LUN or by WWIDs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct FCVolumeSource {
    /// Target world wide names.
    #[serde(default, rename = "targetWWNs", skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub target_wwns: Option<Vec<String>>,
    /// Logical unit number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub lun: Option<i32>,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub read_only: Option<bool>,
    /// World wide identifiers, instead of WWNs and LUN.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 5)]
    pub wwids: Option<Vec<String>>,
}

/// A vSphere virtual disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct VsphereVirtualDiskVolumeSource {
    /// Path of the VMDK.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub volume_path: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub fs_type: Option<String>,
    /// Storage policy name (SPBM).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub storage_policy_name: Option<String>,
    /// Storage policy ID (SPBM).
    #[serde(default, rename = "storagePolicyID", skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub storage_policy_id: Option<String>,
}

/// An Azure data disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct AzureDiskVolumeSource {
    /// Name of the disk.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub disk_name: String,
    /// URI of the disk.
    #[serde(default, rename = "diskURI")]
    #[api(required)]
    #[api(proto = 2)]
    pub disk_uri: String,
    /// Host caching: `None`, `ReadOnly` or `ReadWrite`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = "ReadWrite", one_of("None", "ReadOnly", "ReadWrite"))]
    #[api(proto = 3)]
    pub caching_mode: Option<String>,
    /// Filesystem type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = "ext4")]
    #[api(proto = 4)]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = false)]
    #[api(proto = 5)]
    pub read_only: Option<bool>,
    /// `Shared`, `Dedicated` or `Managed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = "Shared", one_of("Dedicated", "Managed", "Shared"))]
    #[api(proto = 6)]
    pub kind: Option<String>,
}

/// A Photon Controller persistent disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PhotonPersistentDiskVolumeSource {
    /// ID of the disk.
    #[serde(default, rename = "pdID")]
    #[api(required)]
    #[api(proto = 1)]
    pub pd_id: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub fs_type: Option<String>,
}

/// A Portworx volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PortworxVolumeSource {
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
}

/// A ScaleIO volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ScaleIOVolumeSource {
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
    /// Secret with the ScaleIO credentials.
    #[serde(default)]
    #[api(proto = 3)]
    #[api(schema_required)]
    pub secret_ref: Option<LocalObjectReference>,
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
    /// `ThickProvisioned` or `ThinProvisioned`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "ThinProvisioned")]
    #[api(proto = 7)]
    pub storage_mode: Option<String>,
    /// Name of an existing volume.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 8)]
    pub volume_name: Option<String>,
    /// Filesystem type.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "xfs")]
    #[api(proto = 9)]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 10)]
    pub read_only: Option<bool>,
}

/// A StorageOS volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct StorageOSVolumeSource {
    /// Name of the volume within its StorageOS namespace.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub volume_name: Option<String>,
    /// StorageOS namespace; the pod's namespace when unset.
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
    pub secret_ref: Option<LocalObjectReference>,
}
