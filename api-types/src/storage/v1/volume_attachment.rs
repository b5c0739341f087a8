//! VolumeAttachments: requests to attach a volume to a node, and the attacher's
//! answer.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::v1::persistent_volume::PersistentVolumeSpec;
use crate::go_json::{null_as_default, omitempty};

/// Asks a volume driver's attacher to attach one volume to one node; the
/// attacher reports the outcome in the status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "storage.k8s.io",
    version = "v1",
    plural = "volumeattachments",
    storage_prefix = "volumeattachments",
    reset_status = "metadata, spec",
    return_deleted_object,
    cluster_scoped,
    status,
    generation = false,
    printer_column(name = "Attacher", type = "string", json_path = ".spec.attacher",
        format = "name", description = "Volume driver that handles the attachment."),
    printer_column(name = "PV", type = "string", json_path = ".spec.source.persistentVolumeName",
        description = "Persistent volume to attach, if it is one."),
    printer_column(name = "Node", type = "string", json_path = ".spec.nodeName",
        description = "Node the volume is attached to."),
    printer_column(name = "Attached", type = "boolean", json_path = ".status.attached",
        description = "Whether the attachment succeeded."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the attachment was requested."),
    table_cells = volume_attachment_cells,
    validate_update = super::validation::volume_attachment::validate_volume_attachment_update
)]
pub struct VolumeAttachment {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The volume, the node and the driver to attach with.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    #[api(required)]
    pub spec: VolumeAttachmentSpec,
    /// Outcome of attaching and detaching, written by the attacher.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: VolumeAttachmentStatus,
}

/// What to attach where.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::volume_attachment::validate_volume_attachment_spec)]
pub struct VolumeAttachmentSpec {
    /// Name of the volume driver that must handle the attachment.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub attacher: String,
    /// The volume to attach.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    #[api(required)]
    pub source: VolumeAttachmentSource,
    /// Node to attach the volume to.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 3)]
    pub node_name: String,
}

/// The volume of an attachment: a persistent volume by name, or the spec of an
/// inline volume of a pod (exactly one is set).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct VolumeAttachmentSource {
    /// Name of the persistent volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub persistent_volume_name: Option<String>,
    /// A pod's inline volume translated to a persistent volume spec (CSI
    /// migration of in-tree volumes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub inline_volume_spec: Option<PersistentVolumeSpec>,
}

/// The outcome of an attachment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::volume_attachment::validate_volume_attachment_status)]
pub struct VolumeAttachmentStatus {
    /// Whether the volume is attached; set by the attacher only.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub attached: bool,
    /// Driver-specific facts of a successful attachment (e.g. the device path),
    /// passed on to the mount calls.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub attachment_metadata: Option<BTreeMap<String, String>>,
    /// Last error of attaching; cleared once the volume is attached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub attach_error: Option<VolumeError>,
    /// Last error of detaching; cleared once the volume is detached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub detach_error: Option<VolumeError>,
}

/// An error an attacher met.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct VolumeError {
    /// When the error happened.
    #[serde(default)]
    #[api(proto = 1, proto_value)]
    pub time: Option<Time>,
    /// What went wrong; may be logged, so it must not hold secrets.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub message: Option<String>,
}

/// The `kubectl get volumeattachments` row (kube-apiserver's
/// `printVolumeAttachment`).
fn volume_attachment_cells(attachment: &VolumeAttachment) -> Vec<Value> {
    let spec = &attachment.spec;
    let pv = spec.source.persistent_volume_name.as_deref();
    vec![
        json!(spec.attacher),
        json!(pv.unwrap_or_default()),
        json!(spec.node_name),
        json!(attachment.status.attached),
        json!(
            attachment
                .metadata
                .creation_timestamp
                .map(|t| t.to_string())
        ),
    ]
}
