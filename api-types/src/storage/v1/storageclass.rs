//! StorageClasses: named kinds of storage that persistent volumes are
//! provisioned from.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::v1::topology_selector_term::TopologySelectorTerm;
use crate::go_json::omitempty;

/// A class of storage: the provisioner that creates its volumes, the
/// parameters passed to it, and the policies of the volumes it creates.
/// Cluster-wide; immutable apart from metadata and `allowVolumeExpansion`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "storage.k8s.io",
    version = "v1",
    plural = "storageclasses",
    storage_prefix = "storageclasses",
    return_deleted_object,
    short_names("sc"),
    cluster_scoped,
    generation = false,
    printer_column(name = "Provisioner", type = "string", json_path = ".provisioner",
        description = "Volume plugin or CSI driver that provisions the volumes."),
    printer_column(name = "ReclaimPolicy", type = "string", json_path = ".reclaimPolicy",
        description = "What happens to a provisioned volume when its claim is deleted."),
    printer_column(name = "VolumeBindingMode", type = "string", json_path = ".volumeBindingMode",
        description = "When claims are bound and volumes provisioned."),
    printer_column(name = "AllowVolumeExpansion", type = "boolean",
        json_path = ".allowVolumeExpansion",
        description = "Whether claims of this class may be resized."),
    table_cells = storageclass_cells,
    validate_update = super::validation::storageclass::validate_storage_class_update,
    warnings = storageclass_warnings
)]
#[api(validate = super::validation::storageclass::validate_storage_class)]
pub struct StorageClass {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The provisioner, e.g. a CSI driver name such as `ebs.csi.aws.com`, or
    /// `kubernetes.io/no-provisioner` for statically created volumes.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub provisioner: String,
    /// Provisioner-specific settings, passed through as is (at most 512 entries,
    /// 256 KiB in all).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub parameters: Option<BTreeMap<String, String>>,
    /// Reclaim policy given to provisioned volumes: `Delete` (the default) or
    /// `Retain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    #[api(default = "Delete")]
    pub reclaim_policy: Option<String>,
    /// Mount options given to provisioned volumes, e.g. `ro` or `nfsvers=4.1`;
    /// not checked here, a bad option makes the mount fail.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 5)]
    pub mount_options: Option<Vec<String>>,
    /// Whether claims of this class may later ask for more storage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6)]
    pub allow_volume_expansion: Option<bool>,
    /// When claims are bound: `Immediate` (the default) or
    /// `WaitForFirstConsumer` (once a pod using the claim is scheduled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    #[api(default = "Immediate")]
    pub volume_binding_mode: Option<String>,
    /// Topology domains volumes may be provisioned in; empty means anywhere.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 8)]
    pub allowed_topologies: Option<Vec<TopologySelectorTerm>>,
}

/// The `kubectl get storageclasses` row (kube-apiserver's `printStorageClass`):
/// unset policies print as their defaults. The ` (default)` suffix the real
/// server adds to the name of the default class is not part of these cells.
fn storageclass_cells(sc: &StorageClass) -> Vec<Value> {
    vec![
        json!(sc.provisioner),
        json!(sc.reclaim_policy.as_deref().unwrap_or("Delete")),
        json!(sc.volume_binding_mode.as_deref().unwrap_or("Immediate")),
        json!(sc.allow_volume_expansion.unwrap_or(false)),
    ]
}

/// The `Warning` headers of a StorageClass write, on create and on every
/// update: topology keys that are deprecated node labels (upstream's
/// `GetWarningsForStorageClass`).
fn storageclass_warnings(sc: &StorageClass, _old: Option<&StorageClass>) -> Vec<String> {
    let mut warnings = Vec::new();
    for (i, term) in sc.allowed_topologies.iter().flatten().enumerate() {
        for (j, expression) in term.match_label_expressions.iter().flatten().enumerate() {
            if let Some(message) = crate::node::v1::warnings::deprecated_node_label(&expression.key)
            {
                let field = kapi_runtime::validation::FieldPath::new("allowedTopologies")
                    .index(i)
                    .child("matchLabelExpressions")
                    .index(j)
                    .child("key");
                warnings.push(format!("{field}: {message}"));
            }
        }
    }
    warnings
}
