//! CSIStorageCapacities: storage a CSI driver can still provision in one
//! topology segment for one storage class.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::Quantity;
use kapi_runtime::meta::{LabelSelector, ObjectMeta};
use serde::{Deserialize, Serialize};

/// Capacity a CSI driver reports for one storage class in the nodes a selector
/// picks; the scheduler reads it for pods with volumes still to be created.
/// Published by the driver's deployment, usually in the driver's namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "storage.k8s.io",
    version = "v1",
    plural = "csistoragecapacities",
    storage_prefix = "csistoragecapacities",
    generation = false,
    printer_column(
        name = "Created At",
        type = "string",
        json_path = ".metadata.creationTimestamp",
        description = "When the object was created, as an RFC 3339 timestamp."
    ),
    warnings = csistoragecapacity_warnings,
    validate_update = super::validation::csistoragecapacity::validate_csi_storage_capacity_update
)]
#[api(validate = super::validation::csistoragecapacity::validate_csi_storage_capacity)]
pub struct CSIStorageCapacity {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The nodes this capacity is reachable from; unset means none, an empty
    /// selector means all. Immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub node_topology: Option<LabelSelector>,
    /// The storage class the capacity is for (its parameters shape what can
    /// be provisioned). Immutable.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 3)]
    pub storage_class_name: String,
    /// Total space still available for new volumes, e.g. `500Gi`; unset
    /// means unknown, zero means none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub capacity: Option<Quantity>,
    /// Largest single volume that can be created now; unset means `capacity`
    /// is the only limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub maximum_volume_size: Option<Quantity>,
}

/// The `Warning` headers of a CSIStorageCapacity write, on create and on
/// every update: deprecated node labels in `nodeTopology`.
fn csistoragecapacity_warnings(
    csc: &CSIStorageCapacity,
    _old: Option<&CSIStorageCapacity>,
) -> Vec<String> {
    crate::node::v1::warnings::node_selector_warnings(
        csc.node_topology.as_ref(),
        &kapi_runtime::validation::FieldPath::new("nodeTopology"),
    )
}
