//! CSIDrivers: how Kubernetes should treat the volumes of an installed
//! Container Storage Interface driver.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::{null_as_default, omitempty};

/// The cluster-wide settings of one CSI volume driver, named after the driver
/// (e.g. `ebs.csi.aws.com`). Kubelet and the attach controller read it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "storage.k8s.io",
    version = "v1",
    plural = "csidrivers",
    storage_prefix = "csidrivers",
    return_deleted_object,
    cluster_scoped,
    generation = false,
    printer_column(name = "AttachRequired", type = "boolean", json_path = ".spec.attachRequired",
        description = "Whether volumes must be attached before they are mounted."),
    printer_column(name = "PodInfoOnMount", type = "boolean", json_path = ".spec.podInfoOnMount",
        description = "Whether the driver receives pod details when mounting."),
    printer_column(name = "StorageCapacity", type = "boolean",
        json_path = ".spec.storageCapacity",
        description = "Whether scheduling considers the capacity the driver reports."),
    printer_column(name = "TokenRequests", type = "string", json_path = ".spec.tokenRequests",
        description = "Audiences of the service account tokens passed to the driver."),
    printer_column(name = "RequiresRepublish", type = "boolean",
        json_path = ".spec.requiresRepublish",
        description = "Whether volumes are published again periodically."),
    printer_column(name = "Modes", type = "string", json_path = ".spec.volumeLifecycleModes",
        description = "Volume lifecycle modes the driver supports."),
    table_cells = csidriver_cells,
    validate_update = super::validation::csi::validate_csi_driver_update
)]
pub struct CSIDriver {
    /// Name (the driver's name, at most 63 characters) and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// How the driver's volumes are handled.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    #[api(required)]
    pub spec: CSIDriverSpec,
}

/// The behaviour of a CSI driver's volumes. `attachRequired` and
/// `volumeLifecycleModes` are immutable.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::default_csi_driver_spec)]
#[api(validate = super::validation::csi::validate_csi_driver_spec)]
pub struct CSIDriverSpec {
    /// Whether volumes need an attach step (a VolumeAttachment, and the
    /// driver's ControllerPublishVolume) before mounting; true by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    #[api(default = true)]
    pub attach_required: Option<bool>,
    /// Whether kubelet passes the pod's name, namespace, UID and service account
    /// to the driver as volume context when mounting; false by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    #[api(default = false)]
    pub pod_info_on_mount: Option<bool>,
    /// Volume kinds the driver serves: `Persistent` (through persistent volumes,
    /// the default) and/or `Ephemeral` (inline in the pod spec).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "set")]
    #[api(proto = 3)]
    pub volume_lifecycle_modes: Option<Vec<String>>,
    /// Whether the scheduler checks the CSIStorageCapacity objects the driver
    /// publishes before placing pods with unbound volumes; false by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    #[api(default = false)]
    pub storage_capacity: Option<bool>,
    /// Whether the driver applies the pod's fsGroup: `ReadWriteOnceWithFSType`
    /// (the default), `File` or `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    #[api(default = "ReadWriteOnceWithFSType")]
    pub fs_group_policy: Option<String>,
    /// Service account tokens kubelet requests for the pod and passes to the
    /// driver on mount, one per audience.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 6)]
    pub token_requests: Option<Vec<TokenRequest>>,
    /// Whether kubelet calls NodePublishVolume again periodically, e.g. so that
    /// the driver can refresh tokens; false by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    #[api(default = false)]
    pub requires_republish: Option<bool>,
    /// Whether the driver supports mounting with `-o context` so that kubelet
    /// can set the SELinux label of the volume at mount time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    #[api(default = false)]
    pub se_linux_mount: Option<bool>,
}

/// A service account token a CSI driver wants for the pods it mounts volumes
/// for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct TokenRequest {
    /// Audience of the token; empty means the API server's audiences.
    // Required in the schema, as upstream's, but an empty audience is valid.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub audience: String,
    /// Validity of the token in seconds; the service account token default
    /// when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub expiration_seconds: Option<i64>,
}

/// The `kubectl get csidrivers` row (kube-apiserver's `printCSIDriver`): unset
/// booleans print as their defaults, lists joined with commas.
fn csidriver_cells(driver: &CSIDriver) -> Vec<Value> {
    let spec = &driver.spec;
    let tokens = match spec.token_requests.as_deref() {
        None | Some([]) => "<unset>".to_owned(),
        Some(requests) => {
            let audiences: Vec<&str> = requests.iter().map(|t| t.audience.as_str()).collect();
            audiences.join(",")
        }
    };
    let modes = spec.volume_lifecycle_modes.as_deref().unwrap_or_default();
    let modes = if modes.is_empty() {
        "<none>".to_owned()
    } else {
        modes.join(",")
    };
    vec![
        json!(spec.attach_required.unwrap_or(true)),
        json!(spec.pod_info_on_mount.unwrap_or(false)),
        json!(spec.storage_capacity.unwrap_or(false)),
        json!(tokens),
        json!(spec.requires_republish.unwrap_or(false)),
        json!(modes),
    ]
}
