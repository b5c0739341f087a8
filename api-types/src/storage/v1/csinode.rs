//! CSINodes: the CSI drivers installed on a node, as kubelet registers them.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::null_as_default;

/// The CSI drivers of one node; named after the node, which owns it. Kubelet
/// creates and updates it as drivers register.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "storage.k8s.io",
    version = "v1",
    plural = "csinodes",
    storage_prefix = "csinodes",
    return_deleted_object,
    cluster_scoped,
    generation = false,
    printer_column(name = "Drivers", type = "integer", json_path = ".spec.drivers",
        description = "Number of CSI drivers registered on the node."),
    table_cells = csinode_cells,
    validate_update = super::validation::csi::validate_csi_node_update
)]
pub struct CSINode {
    /// Name (the node's name) and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The registered drivers.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    #[api(required)]
    pub spec: CSINodeSpec,
}

/// The CSI drivers of a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::csi::validate_csi_node_spec)]
pub struct CSINodeSpec {
    /// One entry per driver registered on the node, keyed by driver name; an
    /// empty list means none (or none yet). Go writes `null` for an unset list.
    #[serde(default)]
    #[api(required)]
    #[api(list_type = "map", list_map_keys("name"))]
    #[api(patch_strategy = "merge", patch_merge_key = "name")]
    #[api(proto = 1)]
    pub drivers: Option<Vec<CSINodeDriver>>,
}

/// One CSI driver as registered on a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CSINodeDriver {
    /// Name of the driver, as in its CSIDriver object.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// The node's ID as the driver knows it, passed to the driver when volumes
    /// are attached to this node.
    #[serde(default, rename = "nodeID")]
    #[api(required)]
    #[api(proto = 2)]
    pub node_id: String,
    /// Node label keys the driver uses for topology, e.g.
    /// `topology.kubernetes.io/zone`; kubelet copies their values into the
    /// node's labels. Go writes `null` for an unset list.
    #[serde(default)]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub topology_keys: Option<Vec<String>>,
    /// Volume resources of the driver on this node; absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub allocatable: Option<VolumeNodeResources>,
}

/// Limits on the volumes a CSI driver can serve on one node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct VolumeNodeResources {
    /// Most volumes of this driver that may be in use on the node at once;
    /// unset means no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub count: Option<i32>,
}

/// The `kubectl get csinodes` row (kube-apiserver's `printCSINode`): the
/// number of drivers.
fn csinode_cells(node: &CSINode) -> Vec<Value> {
    vec![json!(node.spec.drivers.as_ref().map_or(0, Vec::len))]
}
