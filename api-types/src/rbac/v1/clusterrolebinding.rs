//! Cluster role bindings: cluster-wide grants of a cluster role's permissions.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::rolebinding::{RoleRef, Subject, binding_cells};
use crate::go_json::{null_as_default, omitempty};

/// Grants the permissions of a ClusterRole to a list of subjects in every
/// namespace and on cluster-scoped resources and non-resource URLs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "rbac.authorization.k8s.io",
    version = "v1",
    plural = "clusterrolebindings",
    storage_prefix = "clusterrolebindings",
    cluster_scoped,
    generation = false,
    name_format = "path-segment",
    printer_column(name = "Role", type = "string", json_path = ".roleRef.name",
        description = "The bound cluster role, as kind/name."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the binding was created."),
    printer_column(name = "Users", type = "string", json_path = ".subjects", priority = 1,
        description = "Users the binding grants the cluster role to."),
    printer_column(name = "Groups", type = "string", json_path = ".subjects", priority = 1,
        description = "Groups the binding grants the cluster role to."),
    printer_column(name = "ServiceAccounts", type = "string", json_path = ".subjects",
        priority = 1, description = "Service accounts (namespace/name) the binding grants the cluster role to."),
    table_cells = clusterrolebinding_cells,
    validate_update = super::validation::validate_cluster_role_binding_update
)]
#[api(validate = super::validation::validate_cluster_role_binding)]
pub struct ClusterRoleBinding {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// Who receives the cluster role's permissions.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub subjects: Option<Vec<Subject>>,
    /// The ClusterRole that is granted; cannot change after creation.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    #[api(required)]
    pub role_ref: RoleRef,
}

/// The `kubectl get clusterrolebindings` row (kube-apiserver's
/// `printClusterRoleBinding`).
fn clusterrolebinding_cells(binding: &ClusterRoleBinding) -> Vec<Value> {
    binding_cells(
        &binding.role_ref,
        binding.metadata.creation_timestamp,
        binding.subjects.as_deref(),
    )
}
