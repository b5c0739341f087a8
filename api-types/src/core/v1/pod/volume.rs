//! Volumes of a pod and the common volume sources.

use std::collections::BTreeMap;

use kapi_codegen::ApiType;
use kapi_runtime::Quantity;
use serde::{Deserialize, Serialize};

use super::claim::EphemeralVolumeSource;
use super::projected::{DownwardAPIVolumeSource, ProjectedVolumeSource};
use super::volume_block::{
    AWSElasticBlockStoreVolumeSource, AzureDiskVolumeSource, CinderVolumeSource, FCVolumeSource,
    FlexVolumeSource, GCEPersistentDiskVolumeSource, ISCSIVolumeSource,
    PhotonPersistentDiskVolumeSource, PortworxVolumeSource, RBDVolumeSource, ScaleIOVolumeSource,
    StorageOSVolumeSource, VsphereVirtualDiskVolumeSource,
};
use super::volume_shared::{
    AzureFileVolumeSource, CephFSVolumeSource, FlockerVolumeSource, GitRepoVolumeSource,
    GlusterfsVolumeSource, QuobyteVolumeSource,
};
use crate::core::v1::reference::LocalObjectReference;
use crate::go_json::omitempty;

/// A named volume of a pod that containers can mount; exactly one source is set
/// (an `emptyDir` when none is).
///
/// The sources are boxed, as Go's are pointers: inline, every volume was 3.2 KB
/// for the one source it sets, and the watch cache holds every pod's volumes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(field = "volumeSource", number = 2, message = "VolumeSource"))]
pub struct Volume {
    /// Name of the volume, unique within the pod (a DNS label).
    #[serde(default)]
    #[api(required, format = "dns1123-label")]
    #[api(proto = 1)]
    pub name: String,
    /// A file or directory of the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1, proto_in = "volumeSource")]
    pub host_path: Option<Box<HostPathVolumeSource>>,
    /// A scratch directory that lives as long as the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2, proto_in = "volumeSource")]
    pub empty_dir: Option<Box<EmptyDirVolumeSource>>,
    /// A GCE persistent disk (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3, proto_in = "volumeSource")]
    pub gce_persistent_disk: Option<Box<GCEPersistentDiskVolumeSource>>,
    /// An AWS EBS volume (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4, proto_in = "volumeSource")]
    pub aws_elastic_block_store: Option<Box<AWSElasticBlockStoreVolumeSource>>,
    /// A git checkout (deprecated: clone in an init container instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5, proto_in = "volumeSource")]
    pub git_repo: Option<Box<GitRepoVolumeSource>>,
    /// The keys of a Secret as files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6, proto_in = "volumeSource")]
    pub secret: Option<Box<SecretVolumeSource>>,
    /// An NFS export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7, proto_in = "volumeSource")]
    pub nfs: Option<Box<NFSVolumeSource>>,
    /// An iSCSI disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8, proto_in = "volumeSource")]
    pub iscsi: Option<Box<ISCSIVolumeSource>>,
    /// A GlusterFS volume (removed driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9, proto_in = "volumeSource")]
    pub glusterfs: Option<Box<GlusterfsVolumeSource>>,
    /// A PersistentVolumeClaim in the pod's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10, proto_in = "volumeSource")]
    pub persistent_volume_claim: Option<Box<PersistentVolumeClaimVolumeSource>>,
    /// A Ceph RBD image (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 11, proto_in = "volumeSource")]
    pub rbd: Option<Box<RBDVolumeSource>>,
    /// A volume of an exec-based FlexVolume driver (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 12, proto_in = "volumeSource")]
    pub flex_volume: Option<Box<FlexVolumeSource>>,
    /// An OpenStack Cinder volume (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 13, proto_in = "volumeSource")]
    pub cinder: Option<Box<CinderVolumeSource>>,
    /// A CephFS mount (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 14, proto_in = "volumeSource")]
    pub cephfs: Option<Box<CephFSVolumeSource>>,
    /// A Flocker dataset (removed driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 15, proto_in = "volumeSource")]
    pub flocker: Option<Box<FlockerVolumeSource>>,
    /// Fields of the pod as files (downward API).
    #[serde(
        default,
        rename = "downwardAPI",
        skip_serializing_if = "Option::is_none"
    )]
    #[api(proto = 16, proto_in = "volumeSource")]
    pub downward_api: Option<Box<DownwardAPIVolumeSource>>,
    /// A Fibre Channel disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 17, proto_in = "volumeSource")]
    pub fc: Option<Box<FCVolumeSource>>,
    /// An Azure File share (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 18, proto_in = "volumeSource")]
    pub azure_file: Option<Box<AzureFileVolumeSource>>,
    /// The keys of a ConfigMap as files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 19, proto_in = "volumeSource")]
    pub config_map: Option<Box<ConfigMapVolumeSource>>,
    /// A vSphere virtual disk (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 20, proto_in = "volumeSource")]
    pub vsphere_volume: Option<Box<VsphereVirtualDiskVolumeSource>>,
    /// A Quobyte volume (removed driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 21, proto_in = "volumeSource")]
    pub quobyte: Option<Box<QuobyteVolumeSource>>,
    /// An Azure data disk (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 22, proto_in = "volumeSource")]
    pub azure_disk: Option<Box<AzureDiskVolumeSource>>,
    /// A Photon Controller disk (removed driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 23, proto_in = "volumeSource")]
    pub photon_persistent_disk: Option<Box<PhotonPersistentDiskVolumeSource>>,
    /// Several sources (Secrets, ConfigMaps, downward API, tokens) in one directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 26, proto_in = "volumeSource")]
    pub projected: Option<Box<ProjectedVolumeSource>>,
    /// A Portworx volume (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 24, proto_in = "volumeSource")]
    pub portworx_volume: Option<Box<PortworxVolumeSource>>,
    /// A ScaleIO volume (removed driver).
    #[serde(default, rename = "scaleIO", skip_serializing_if = "Option::is_none")]
    #[api(proto = 25, proto_in = "volumeSource")]
    pub scale_io: Option<Box<ScaleIOVolumeSource>>,
    /// A StorageOS volume (removed driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 27, proto_in = "volumeSource")]
    pub storageos: Option<Box<StorageOSVolumeSource>>,
    /// An inline volume of a CSI driver that supports ephemeral volumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 28, proto_in = "volumeSource")]
    pub csi: Option<Box<CSIVolumeSource>>,
    /// A PersistentVolumeClaim created for the pod and deleted with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 29, proto_in = "volumeSource")]
    pub ephemeral: Option<Box<EphemeralVolumeSource>>,
    /// The content of an OCI image or artifact, read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 30, proto_in = "volumeSource")]
    pub image: Option<Box<ImageVolumeSource>>,
}

impl Volume {
    /// Whether no source is set (Kubernetes then makes it an `emptyDir`): the
    /// volume is a default one but for its name.
    pub fn has_no_source(&self) -> bool {
        *self
            == Volume {
                name: self.name.clone(),
                ..Volume::default()
            }
    }
}

/// Maps one key of a ConfigMap or Secret to a file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct KeyToPath {
    /// Key to project.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub key: String,
    /// Relative file path; may not contain `..`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub path: String,
    /// Permission bits of the file, e.g. `0400` (256); the volume's default when
    /// unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub mode: Option<i32>,
}

/// A ConfigMap's keys as files.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(
    field = "localObjectReference",
    number = 1,
    message = "LocalObjectReference"
))]
pub struct ConfigMapVolumeSource {
    /// Name of the ConfigMap.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1, proto_in = "localObjectReference")]
    pub name: Option<String>,
    /// Keys to project, and their paths; every key when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub items: Option<Vec<KeyToPath>>,
    /// Permission bits of the files (decimal in JSON; `0644` is 420).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = 420)]
    #[api(proto = 3)]
    pub default_mode: Option<i32>,
    /// Start the pod even if the ConfigMap or a listed key is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub optional: Option<bool>,
}

/// A Secret's keys as files.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SecretVolumeSource {
    /// Name of the Secret.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub secret_name: Option<String>,
    /// Keys to project, and their paths; every key when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub items: Option<Vec<KeyToPath>>,
    /// Permission bits of the files (decimal in JSON; `0644` is 420).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = 420)]
    #[api(proto = 3)]
    pub default_mode: Option<i32>,
    /// Start the pod even if the Secret or a listed key is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub optional: Option<bool>,
}

/// A scratch directory created empty for the pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct EmptyDirVolumeSource {
    /// Backing storage: empty for the node's disk, `Memory` for tmpfs,
    /// `HugePages` (or `HugePages-<size>`) for huge pages.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub medium: Option<String>,
    /// Most space the directory may use before the pod is evicted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub size_limit: Option<Quantity>,
}

/// A path of the node's filesystem.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct HostPathVolumeSource {
    /// Path on the node.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub path: String,
    /// What must exist at the path: empty (no check), `DirectoryOrCreate`,
    /// `Directory`, `FileOrCreate`, `File`, `Socket`, `CharDevice` or
    /// `BlockDevice`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[api(default = "")]
    #[api(proto = 2)]
    pub type_: Option<String>,
}

/// A PersistentVolumeClaim used as a volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimVolumeSource {
    /// Name of the claim in the pod's namespace.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub claim_name: String,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub read_only: Option<bool>,
}

/// An NFS export mounted for the pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NFSVolumeSource {
    /// Host name or IP of the NFS server.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub server: String,
    /// Exported path.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub path: String,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub read_only: Option<bool>,
}

/// An ephemeral inline volume provided by a CSI driver.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CSIVolumeSource {
    /// Name of the CSI driver, as registered on the node.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub driver: String,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub read_only: Option<bool>,
    /// Filesystem type, e.g. `ext4`; the driver decides when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub fs_type: Option<String>,
    /// Driver-specific parameters.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub volume_attributes: Option<BTreeMap<String, String>>,
    /// Secret passed to the driver's publish calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub node_publish_secret_ref: Option<LocalObjectReference>,
}

/// The files of an OCI image or artifact, mounted read-only.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ImageVolumeSource {
    /// Image or artifact reference.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub reference: Option<String>,
    /// When to pull: `Always`, `IfNotPresent` or `Never`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(one_of("Always", "IfNotPresent", "Never"))]
    #[api(proto = 2)]
    pub pull_policy: Option<String>,
}
