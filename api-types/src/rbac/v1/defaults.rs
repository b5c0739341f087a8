//! The defaults of rbac/v1 (k8s.io/kubernetes/pkg/apis/rbac/v1/defaults.go):
//! users, groups and roles belong to the RBAC API group.

use super::rolebinding::{RoleRef, Subject};

/// The RBAC API group's name.
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// `SetDefaults_RoleBinding` and `SetDefaults_ClusterRoleBinding`: the role
/// referred to is an RBAC role.
pub(super) fn default_role_ref(role_ref: &mut RoleRef) {
    if role_ref.api_group.is_empty() {
        role_ref.api_group = RBAC_GROUP.to_owned();
    }
}

/// `SetDefaults_Subject`: a user or group subject belongs to the RBAC group, a
/// service account to the core group (the empty name).
pub(super) fn default_subject(subject: &mut Subject) {
    if !subject.api_group.as_deref().unwrap_or_default().is_empty() {
        return;
    }
    match subject.kind.as_str() {
        "User" | "Group" => subject.api_group = Some(RBAC_GROUP.to_owned()),
        "ServiceAccount" => subject.api_group = Some(String::new()),
        _ => {}
    }
}
