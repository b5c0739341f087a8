//! PersistentVolumes: pieces of storage of the cluster, provisioned by an
//! administrator or a storage class, that claims bind to.

pub mod source;

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::Quantity;
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use self::source::{
    AzureFilePersistentVolumeSource, CSIPersistentVolumeSource, CephFSPersistentVolumeSource,
    CinderPersistentVolumeSource, FlexPersistentVolumeSource, GlusterfsPersistentVolumeSource,
    ISCSIPersistentVolumeSource, LocalVolumeSource, RBDPersistentVolumeSource,
    ScaleIOPersistentVolumeSource, StorageOSPersistentVolumeSource,
};
use crate::core::v1::pod::affinity::NodeSelector;
use crate::core::v1::pod::volume::{HostPathVolumeSource, NFSVolumeSource};
use crate::core::v1::pod::volume_block::{
    AWSElasticBlockStoreVolumeSource, AzureDiskVolumeSource, FCVolumeSource,
    GCEPersistentDiskVolumeSource, PhotonPersistentDiskVolumeSource, PortworxVolumeSource,
    VsphereVirtualDiskVolumeSource,
};
use crate::core::v1::pod::volume_shared::{FlockerVolumeSource, QuobyteVolumeSource};
use crate::core::v1::reference::ObjectReference;
use crate::go_json::{null_as_default, omitempty};

/// The annotation that named a volume's storage class before
/// `storageClassName` existed; printers still prefer it.
pub const BETA_STORAGE_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// A piece of storage in the cluster, with its size, access modes and backing
/// source, bound to at most one claim.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "persistentvolumes",
    return_deleted_object,
    short_names("pv"),
    cluster_scoped,
    status,
    generation = false,
    printer_column(name = "Capacity", type = "string", json_path = ".spec.capacity",
        description = "Storage size of the volume."),
    printer_column(name = "Access Modes", type = "string", json_path = ".spec.accessModes",
        description = "Access modes, abbreviated (RWO, ROX, RWX, RWOP)."),
    printer_column(name = "Reclaim Policy", type = "string",
        json_path = ".spec.persistentVolumeReclaimPolicy",
        description = "What happens to the volume once its claim is gone."),
    printer_column(name = "Status", type = "string", json_path = ".status.phase",
        description = "Phase of the volume, or Terminating while it is deleted."),
    printer_column(name = "Claim", type = "string", json_path = ".spec.claimRef",
        description = "The bound claim, as namespace/name."),
    printer_column(name = "StorageClass", type = "string", json_path = ".spec.storageClassName",
        description = "Storage class of the volume."),
    printer_column(name = "VolumeAttributesClass", type = "string",
        json_path = ".spec.volumeAttributesClassName",
        description = "Volume attributes class of the volume, or <unset>."),
    printer_column(name = "Reason", type = "string", json_path = ".status.reason",
        description = "Machine-readable reason of a failure."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the volume was created."),
    printer_column(name = "VolumeMode", type = "string", json_path = ".spec.volumeMode",
        priority = 1, description = "Filesystem or Block, or <unset>."),
    prepare_create = stamp_phase_transition,
    prepare_status_update = track_phase_transition,
    validate_update = super::validation::validate_pv_update,
    table_cells = persistent_volume_cells,
    warnings = super::validation::pv_warnings
)]
#[api(defaults = super::defaults::default_persistent_volume)]
#[api(validate = super::validation::validate_pv)]
pub struct PersistentVolume {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The storage and how it may be used.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: PersistentVolumeSpec,
    /// Phase of the volume, as last observed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: PersistentVolumeStatus,
}

/// What a persistent volume is: capacity, one backing source (inline in JSON, a
/// nested `PersistentVolumeSource` in protobuf), access modes and binding.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(
    field = "persistentVolumeSource",
    number = 2,
    message = "PersistentVolumeSource"
))]
pub struct PersistentVolumeSpec {
    /// Resources of the volume; only `storage` (bytes, e.g. `10Gi`) is used.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub capacity: Option<BTreeMap<String, Quantity>>,
    /// A GCE persistent disk (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1, proto_in = "persistentVolumeSource")]
    pub gce_persistent_disk: Option<GCEPersistentDiskVolumeSource>,
    /// An AWS EBS volume (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2, proto_in = "persistentVolumeSource")]
    pub aws_elastic_block_store: Option<AWSElasticBlockStoreVolumeSource>,
    /// A path on the node, for single-node testing only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3, proto_in = "persistentVolumeSource")]
    pub host_path: Option<HostPathVolumeSource>,
    /// A GlusterFS volume (removed driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4, proto_in = "persistentVolumeSource")]
    pub glusterfs: Option<GlusterfsPersistentVolumeSource>,
    /// An NFS export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5, proto_in = "persistentVolumeSource")]
    pub nfs: Option<NFSVolumeSource>,
    /// A Ceph RBD image (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6, proto_in = "persistentVolumeSource")]
    pub rbd: Option<RBDPersistentVolumeSource>,
    /// An iSCSI disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7, proto_in = "persistentVolumeSource")]
    pub iscsi: Option<ISCSIPersistentVolumeSource>,
    /// An OpenStack Cinder volume (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8, proto_in = "persistentVolumeSource")]
    pub cinder: Option<CinderPersistentVolumeSource>,
    /// A CephFS mount (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9, proto_in = "persistentVolumeSource")]
    pub cephfs: Option<CephFSPersistentVolumeSource>,
    /// A Fibre Channel disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10, proto_in = "persistentVolumeSource")]
    pub fc: Option<FCVolumeSource>,
    /// A Flocker dataset (removed driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 11, proto_in = "persistentVolumeSource")]
    pub flocker: Option<FlockerVolumeSource>,
    /// A volume of an exec-based FlexVolume driver (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 12, proto_in = "persistentVolumeSource")]
    pub flex_volume: Option<FlexPersistentVolumeSource>,
    /// An Azure File share (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 13, proto_in = "persistentVolumeSource")]
    pub azure_file: Option<AzureFilePersistentVolumeSource>,
    /// A vSphere virtual disk (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 14, proto_in = "persistentVolumeSource")]
    pub vsphere_volume: Option<VsphereVirtualDiskVolumeSource>,
    /// A Quobyte volume (removed driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 15, proto_in = "persistentVolumeSource")]
    pub quobyte: Option<QuobyteVolumeSource>,
    /// An Azure data disk (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 16, proto_in = "persistentVolumeSource")]
    pub azure_disk: Option<AzureDiskVolumeSource>,
    /// A Photon Controller disk (removed driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 17, proto_in = "persistentVolumeSource")]
    pub photon_persistent_disk: Option<PhotonPersistentDiskVolumeSource>,
    /// A Portworx volume (deprecated in-tree driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 18, proto_in = "persistentVolumeSource")]
    pub portworx_volume: Option<PortworxVolumeSource>,
    /// A ScaleIO volume (removed driver).
    #[serde(default, rename = "scaleIO", skip_serializing_if = "Option::is_none")]
    #[api(proto = 19, proto_in = "persistentVolumeSource")]
    pub scale_io: Option<ScaleIOPersistentVolumeSource>,
    /// A disk, partition or directory of one node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 20, proto_in = "persistentVolumeSource")]
    pub local: Option<LocalVolumeSource>,
    /// A StorageOS volume (removed driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 21, proto_in = "persistentVolumeSource")]
    pub storageos: Option<StorageOSPersistentVolumeSource>,
    /// A volume of an external CSI driver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 22, proto_in = "persistentVolumeSource")]
    pub csi: Option<CSIPersistentVolumeSource>,
    /// Ways the volume can be mounted: `ReadWriteOnce`, `ReadOnlyMany`,
    /// `ReadWriteMany`, `ReadWriteOncePod`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub access_modes: Option<Vec<String>>,
    /// The claim bound to this volume (or reserved for it, before binding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(map_type = "granular")]
    #[api(proto = 4)]
    pub claim_ref: Option<ObjectReference>,
    /// What happens once the claim is deleted: `Retain`, `Delete` or the
    /// deprecated `Recycle`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub persistent_volume_reclaim_policy: Option<String>,
    /// StorageClass the volume belongs to; empty for none.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub storage_class_name: Option<String>,
    /// Mount options passed as they are when the volume is mounted, e.g. `ro`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 7)]
    pub mount_options: Option<Vec<String>>,
    /// `Filesystem` (formatted and mounted) or `Block` (a raw device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub volume_mode: Option<String>,
    /// Nodes the volume can be reached from; pods using it are scheduled there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    pub node_affinity: Option<VolumeNodeAffinity>,
    /// VolumeAttributesClass the volume belongs to (mutable attributes such as
    /// IOPS); needs the VolumeAttributesClass feature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10)]
    pub volume_attributes_class_name: Option<String>,
}

/// The nodes a persistent volume can be used from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct VolumeNodeAffinity {
    /// Node selector that a node must match to use the volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub required: Option<NodeSelector>,
}

/// The observed state of a persistent volume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeStatus {
    /// `Pending`, `Available`, `Bound`, `Released` or `Failed`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub phase: Option<String>,
    /// Human-readable detail of the phase.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub message: Option<String>,
    /// Machine-readable reason of a failure, in CamelCase.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub reason: Option<String>,
    /// When the phase last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub last_phase_transition_time: Option<Time>,
}

/// Access modes in printers' short form, in a fixed order (`RWO,ROX,RWX,RWOP`),
/// each once, unknown modes left out (`GetAccessModesAsString`).
pub(crate) fn access_modes_text(modes: Option<&Vec<String>>) -> String {
    let modes = modes.map(Vec::as_slice).unwrap_or_default();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(mode, _)| modes.iter().any(|m| m == mode))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// The storage amount of a resource list as printers show it: `0` when absent.
pub(crate) fn storage_text(resources: Option<&BTreeMap<String, Quantity>>) -> String {
    resources
        .and_then(|r| r.get("storage"))
        .map_or_else(|| "0".to_owned(), |q| q.0.clone())
}

/// The `kubectl get persistentvolumes` row (kube-apiserver's
/// `printPersistentVolume`).
/// PrepareForCreate: a new volume entered its phase (Pending) now.
fn stamp_phase_transition(pv: &mut PersistentVolume) {
    pv.status.last_phase_transition_time = Some(Time::now());
}

/// PrepareForUpdate of `/status`: a phase change moves the transition time
/// to now, unless the writer gave a new one itself; otherwise the stored time
/// stays when the writer gave none.
fn track_phase_transition(new: &mut PersistentVolume, old: &PersistentVolume) {
    let (now, before) = (&new.status, &old.status);
    let time = now.last_phase_transition_time;
    if now.phase == before.phase {
        if time.is_none() {
            new.status.last_phase_transition_time = before.last_phase_transition_time;
        }
    } else if time.is_none() || time == before.last_phase_transition_time {
        new.status.last_phase_transition_time = Some(Time::now());
    }
}

fn persistent_volume_cells(pv: &PersistentVolume) -> Vec<Value> {
    let spec = &pv.spec;
    let claim = spec.claim_ref.as_ref().map_or_else(String::new, |c| {
        let namespace = c.namespace.as_deref().unwrap_or_default();
        let name = c.name.as_deref().unwrap_or_default();
        format!("{namespace}/{name}")
    });
    let phase = if pv.metadata.deletion_timestamp.is_some() {
        "Terminating"
    } else {
        pv.status.phase.as_deref().unwrap_or_default()
    };
    let beta_class = pv
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(BETA_STORAGE_CLASS_ANNOTATION));
    let class = beta_class.or(spec.storage_class_name.as_ref());
    vec![
        json!(storage_text(spec.capacity.as_ref())),
        json!(access_modes_text(spec.access_modes.as_ref())),
        json!(
            spec.persistent_volume_reclaim_policy
                .as_deref()
                .unwrap_or_default()
        ),
        json!(phase),
        json!(claim),
        json!(class.map(String::as_str).unwrap_or_default()),
        json!(
            spec.volume_attributes_class_name
                .as_deref()
                .unwrap_or("<unset>")
        ),
        json!(pv.status.reason.as_deref().unwrap_or_default()),
        json!(pv.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(spec.volume_mode.as_deref().unwrap_or("<unset>")),
    ]
}
