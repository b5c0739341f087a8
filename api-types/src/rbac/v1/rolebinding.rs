//! Role bindings: grants of a role's permissions inside one namespace.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::{null_as_default, omitempty};

/// Grants the permissions of a Role, or of a ClusterRole limited to this
/// namespace, to a list of subjects.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "rbac.authorization.k8s.io",
    version = "v1",
    plural = "rolebindings",
    storage_prefix = "rolebindings",
    generation = false,
    name_format = "path-segment",
    printer_column(name = "Role", type = "string", json_path = ".roleRef.name",
        description = "The bound role, as kind/name."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the binding was created."),
    printer_column(name = "Users", type = "string", json_path = ".subjects", priority = 1,
        description = "Users the binding grants the role to."),
    printer_column(name = "Groups", type = "string", json_path = ".subjects", priority = 1,
        description = "Groups the binding grants the role to."),
    printer_column(name = "ServiceAccounts", type = "string", json_path = ".subjects",
        priority = 1, description = "Service accounts (namespace/name) the binding grants the role to."),
    table_cells = rolebinding_cells,
    validate_update = super::validation::validate_role_binding_update
)]
#[api(validate = super::validation::validate_role_binding)]
pub struct RoleBinding {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// Who receives the role's permissions.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub subjects: Option<Vec<Subject>>,
    /// The Role in this namespace or the ClusterRole that is granted; cannot
    /// change after creation.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    #[api(required)]
    pub role_ref: RoleRef,
}

/// Someone a binding grants a role to: a user, a group or a service account.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::default_subject)]
#[api(map_type = "atomic")]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub kind: String,
    /// API group of the kind: `rbac.authorization.k8s.io` for users and groups,
    /// empty for service accounts.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub api_group: Option<String>,
    /// Name of the user, group or service account.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub name: String,
    /// Namespace of a service account; empty for users and groups.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub namespace: Option<String>,
}

/// The role a binding grants, by API group, kind and name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::default_role_ref)]
#[api(map_type = "atomic")]
pub struct RoleRef {
    /// API group of the role, `rbac.authorization.k8s.io`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub api_group: String,
    /// `Role` or `ClusterRole`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub kind: String,
    /// Name of the role.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub name: String,
}

/// The `kubectl get rolebindings` row (kube-apiserver's `printRoleBinding`).
fn rolebinding_cells(binding: &RoleBinding) -> Vec<Value> {
    binding_cells(
        &binding.role_ref,
        binding.metadata.creation_timestamp,
        binding.subjects.as_deref(),
    )
}

/// The row of a role or cluster role binding: `Kind/name` of the role, the
/// creation time, then users, groups and service accounts (`namespace/name`),
/// each list joined by `, `.
pub(super) fn binding_cells(
    role_ref: &RoleRef,
    created: Option<Time>,
    subjects: Option<&[Subject]>,
) -> Vec<Value> {
    let (mut users, mut groups, mut accounts) = (Vec::new(), Vec::new(), Vec::new());
    for subject in subjects.unwrap_or_default() {
        match subject.kind.as_str() {
            "ServiceAccount" => accounts.push(format!(
                "{}/{}",
                subject.namespace.as_deref().unwrap_or_default(),
                subject.name
            )),
            "User" => users.push(subject.name.clone()),
            "Group" => groups.push(subject.name.clone()),
            _ => {}
        }
    }
    vec![
        json!(format!("{}/{}", role_ref.kind, role_ref.name)),
        json!(created.map(|t| t.to_string())),
        json!(users.join(", ")),
        json!(groups.join(", ")),
        json!(accounts.join(", ")),
    ]
}
