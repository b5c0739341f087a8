//! Volume sources of block devices attached to the node (mostly deprecated
//! in-tree drivers, kept so that existing manifests still decode).

use std::collections::BTreeMap;

use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

use crate::core::v1::reference::LocalObjectReference;
use crate::go_json::omitempty;

/// A GCE persistent disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct GCEPersistentDiskVolumeSource {
    /// Name of the disk in GCE.
    #[serde(default)]
    #[api(required)]
    pub pd_name: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub fs_type: Option<String>,
    /// Partition to mount; the whole disk when 0.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub partition: Option<i32>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub read_only: Option<bool>,
}

/// An AWS EBS volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct AWSElasticBlockStoreVolumeSource {
    /// ID of the EBS volume.
    #[serde(default, rename = "volumeID")]
    #[api(required)]
    pub volume_id: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub fs_type: Option<String>,
    /// Partition to mount; the whole volume when 0.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub partition: Option<i32>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub read_only: Option<bool>,
}

/// An iSCSI disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ISCSIVolumeSource {
    /// Target portal, `ip` or `ip:port` (port 3260 by default).
    #[serde(default)]
    #[api(required)]
    pub target_portal: String,
    /// iSCSI qualified name of the target.
    #[serde(default)]
    #[api(required)]
    pub iqn: String,
    /// Logical unit number.
    #[serde(default)]
    #[api(required)]
    pub lun: i32,
    /// iSCSI interface to use.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "default")]
    pub iscsi_interface: Option<String>,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub read_only: Option<bool>,
    /// More target portals for multipath.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub portals: Option<Vec<String>>,
    /// Use CHAP authentication for discovery.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub chap_auth_discovery: Option<bool>,
    /// Use CHAP authentication for the session.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub chap_auth_session: Option<bool>,
    /// Secret with the CHAP credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
    /// Initiator name, creating a new interface `<portal>:<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initiator_name: Option<String>,
}

/// A Ceph RBD image.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct RBDVolumeSource {
    /// Ceph monitor addresses.
    #[serde(default)]
    #[api(required)]
    pub monitors: Vec<String>,
    /// Name of the image.
    #[serde(default)]
    #[api(required)]
    pub image: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub fs_type: Option<String>,
    /// RADOS pool.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "rbd")]
    pub pool: Option<String>,
    /// RADOS user.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "admin")]
    pub user: Option<String>,
    /// Keyring file of the user.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "/etc/ceph/keyring")]
    pub keyring: Option<String>,
    /// Secret with the user's key, instead of the keyring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub read_only: Option<bool>,
}

/// A volume of an exec-based FlexVolume driver.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct FlexVolumeSource {
    /// Name of the driver.
    #[serde(default)]
    #[api(required)]
    pub driver: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub fs_type: Option<String>,
    /// Secret passed to the driver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub read_only: Option<bool>,
    /// Driver-specific options.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub options: Option<BTreeMap<String, String>>,
}

/// An OpenStack Cinder volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CinderVolumeSource {
    /// ID of the volume.
    #[serde(default, rename = "volumeID")]
    #[api(required)]
    pub volume_id: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub read_only: Option<bool>,
    /// Secret with the OpenStack credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
}

/// A Fibre Channel disk, by target WWNs and LUN or by WWIDs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct FCVolumeSource {
    /// Target world wide names.
    #[serde(default, rename = "targetWWNs", skip_serializing_if = "omitempty")]
    pub target_wwns: Option<Vec<String>>,
    /// Logical unit number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lun: Option<i32>,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub read_only: Option<bool>,
    /// World wide identifiers, instead of WWNs and LUN.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub wwids: Option<Vec<String>>,
}

/// A vSphere virtual disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct VsphereVirtualDiskVolumeSource {
    /// Path of the VMDK.
    #[serde(default)]
    #[api(required)]
    pub volume_path: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub fs_type: Option<String>,
    /// Storage policy name (SPBM).
    #[serde(default, skip_serializing_if = "omitempty")]
    pub storage_policy_name: Option<String>,
    /// Storage policy ID (SPBM).
    #[serde(default, rename = "storagePolicyID", skip_serializing_if = "omitempty")]
    pub storage_policy_id: Option<String>,
}

/// An Azure data disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct AzureDiskVolumeSource {
    /// Name of the disk.
    #[serde(default)]
    #[api(required)]
    pub disk_name: String,
    /// URI of the disk.
    #[serde(default, rename = "diskURI")]
    #[api(required)]
    pub disk_uri: String,
    /// Host caching: `None`, `ReadOnly` or `ReadWrite`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = "ReadWrite", one_of("None", "ReadOnly", "ReadWrite"))]
    pub caching_mode: Option<String>,
    /// Filesystem type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = "ext4")]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = false)]
    pub read_only: Option<bool>,
    /// `Shared`, `Dedicated` or `Managed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = "Shared", one_of("Shared", "Dedicated", "Managed"))]
    pub kind: Option<String>,
}

/// A Photon Controller persistent disk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PhotonPersistentDiskVolumeSource {
    /// ID of the disk.
    #[serde(default, rename = "pdID")]
    #[api(required)]
    pub pd_id: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub fs_type: Option<String>,
}

/// A Portworx volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PortworxVolumeSource {
    /// ID of the volume.
    #[serde(default, rename = "volumeID")]
    #[api(required)]
    pub volume_id: String,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub read_only: Option<bool>,
}

/// A ScaleIO volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ScaleIOVolumeSource {
    /// Address of the ScaleIO API gateway.
    #[serde(default)]
    #[api(required)]
    pub gateway: String,
    /// Name of the storage system.
    #[serde(default)]
    #[api(required)]
    pub system: String,
    /// Secret with the ScaleIO credentials.
    #[serde(default)]
    pub secret_ref: Option<LocalObjectReference>,
    /// Talk to the gateway over TLS.
    #[serde(default, rename = "sslEnabled", skip_serializing_if = "omitempty")]
    pub ssl_enabled: Option<bool>,
    /// Protection domain of the storage.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub protection_domain: Option<String>,
    /// Storage pool of the protection domain.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub storage_pool: Option<String>,
    /// `ThickProvisioned` or `ThinProvisioned`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "ThinProvisioned")]
    pub storage_mode: Option<String>,
    /// Name of an existing volume.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub volume_name: Option<String>,
    /// Filesystem type.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "xfs")]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub read_only: Option<bool>,
}

/// A StorageOS volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct StorageOSVolumeSource {
    /// Name of the volume within its StorageOS namespace.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub volume_name: Option<String>,
    /// StorageOS namespace; the pod's namespace when unset.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub volume_namespace: Option<String>,
    /// Filesystem type, e.g. `ext4`.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub fs_type: Option<String>,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    pub read_only: Option<bool>,
    /// Secret with the StorageOS API credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalObjectReference>,
}
