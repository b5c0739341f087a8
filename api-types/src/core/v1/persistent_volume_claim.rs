//! PersistentVolumeClaims: a user's request for storage, bound to one
//! persistent volume.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::Quantity;
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::v1::persistent_volume::{
    BETA_STORAGE_CLASS_ANNOTATION, access_modes_text, storage_text,
};
use crate::go_json::{null_as_default, omitempty};

pub use crate::core::v1::pod::claim::{PersistentVolumeClaimSpec, VolumeResourceRequirements};

/// A request for storage of some size and access modes, satisfied by binding
/// a persistent volume (existing or provisioned) to it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "persistentvolumeclaims",
    return_deleted_object,
    short_names("pvc"),
    status,
    generation = false,
    printer_column(name = "Status", type = "string", json_path = ".status.phase",
        description = "Phase of the claim, or Terminating while it is deleted."),
    printer_column(name = "Volume", type = "string", json_path = ".spec.volumeName",
        description = "The bound persistent volume."),
    printer_column(name = "Capacity", type = "string", json_path = ".status.capacity",
        description = "Storage size of the bound volume."),
    printer_column(name = "Access Modes", type = "string", json_path = ".status.accessModes",
        description = "Access modes of the bound volume, abbreviated."),
    printer_column(name = "StorageClass", type = "string", json_path = ".spec.storageClassName",
        description = "Storage class the claim asks for."),
    printer_column(name = "VolumeAttributesClass", type = "string",
        json_path = ".spec.volumeAttributesClassName",
        description = "Volume attributes class the claim asks for, or <unset>."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the claim was created."),
    printer_column(name = "VolumeMode", type = "string", json_path = ".spec.volumeMode",
        priority = 1, description = "Filesystem or Block, or <unset>."),
    table_cells = persistent_volume_claim_cells,
    validate_update = super::validation::validate_pvc_update,
    warnings = super::validation::pvc_warnings
)]
#[api(defaults = super::defaults::default_persistent_volume_claim)]
#[api(validate = super::validation::validate_pvc)]
pub struct PersistentVolumeClaim {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The storage asked for.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: PersistentVolumeClaimSpec,
    /// Binding and resize state, as last observed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: PersistentVolumeClaimStatus,
}

/// The observed state of a claim.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::round_claim_status)]
pub struct PersistentVolumeClaimStatus {
    /// `Pending`, `Bound` or `Lost`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub phase: Option<String>,
    /// Access modes of the bound volume.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub access_modes: Option<Vec<String>>,
    /// Resources of the bound volume, e.g. `storage: 10Gi`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub capacity: Option<BTreeMap<String, Quantity>>,
    /// Conditions such as `Resizing` and `FileSystemResizePending`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("type"))]
    #[api(patch_strategy = "merge", patch_merge_key = "type")]
    #[api(proto = 4)]
    pub conditions: Option<Vec<PersistentVolumeClaimCondition>>,
    /// Amounts the resize machinery has set aside for the claim, which may
    /// exceed the request while an expansion is under way.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub allocated_resources: Option<BTreeMap<String, Quantity>>,
    /// Resize progress by resource, e.g. `storage: ControllerResizeInProgress`
    /// or `NodeResizePending`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(map_type = "granular")]
    #[api(proto = 7)]
    pub allocated_resource_statuses: Option<BTreeMap<String, String>>,
    /// VolumeAttributesClass currently applied to the volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub current_volume_attributes_class_name: Option<String>,
    /// Progress of a change of VolumeAttributesClass; unset when none is
    /// under way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    pub modify_volume_status: Option<ModifyVolumeStatus>,
}

/// One condition of a claim.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimCondition {
    /// `Resizing`, `FileSystemResizePending`, `ControllerResizeError`,
    /// `NodeResizeError`, `ModifyVolumeError` or `ModifyingVolume`.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub status: String,
    /// When the condition was last probed.
    #[serde(default)]
    #[api(proto = 3, proto_value)]
    pub last_probe_time: Option<Time>,
    /// When the status last changed.
    #[serde(default)]
    #[api(proto = 4, proto_value)]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub reason: Option<String>,
    /// Human-readable detail of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub message: Option<String>,
}

/// A change of a claim's VolumeAttributesClass in progress.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ModifyVolumeStatus {
    /// The class being applied.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub target_volume_attributes_class_name: Option<String>,
    /// `Pending`, `InProgress` or `Infeasible`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub status: String,
}

/// The `kubectl get persistentvolumeclaims` row (kube-apiserver's
/// `printPersistentVolumeClaim`): capacity and access modes only once bound.
fn persistent_volume_claim_cells(pvc: &PersistentVolumeClaim) -> Vec<Value> {
    let spec = &pvc.spec;
    let phase = if pvc.metadata.deletion_timestamp.is_some() {
        "Terminating"
    } else {
        pvc.status.phase.as_deref().unwrap_or_default()
    };
    let volume = spec.volume_name.as_deref().unwrap_or_default();
    let (capacity, access_modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            storage_text(pvc.status.capacity.as_ref()),
            access_modes_text(pvc.status.access_modes.as_ref()),
        )
    };
    let beta_class = pvc
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(BETA_STORAGE_CLASS_ANNOTATION));
    let class = beta_class.or(spec.storage_class_name.as_ref());
    vec![
        json!(phase),
        json!(volume),
        json!(capacity),
        json!(access_modes),
        json!(class.map(String::as_str).unwrap_or_default()),
        json!(
            spec.volume_attributes_class_name
                .as_deref()
                .unwrap_or("<unset>")
        ),
        json!(pvc.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(spec.volume_mode.as_deref().unwrap_or("<unset>")),
    ]
}
