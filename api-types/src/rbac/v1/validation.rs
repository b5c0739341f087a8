//! The checks of pkg/apis/rbac/validation: policy rules, role references and
//! subjects, and the immutable role reference of a binding.

use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::clusterrole::ClusterRole;
use super::clusterrolebinding::ClusterRoleBinding;
use super::role::{PolicyRule, Role};
use super::rolebinding::{RoleBinding, RoleRef, Subject};
use crate::validation::{
    GoStrings, Raw, dns1123_subdomain, path_segment_name, selector_converts,
    validate_label_selector,
};

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// `ValidatePolicyRule`: verbs, and either resources (with their groups) or
/// non-resource URLs (cluster roles only).
fn policy_rule(rule: &PolicyRule, namespaced: bool, path: &FieldPath, errs: &mut FieldErrors) {
    if rule.verbs.is_empty() {
        errs.required(path.child("verbs"), "verbs must contain at least one value");
    }
    let set = |list: &Option<Vec<String>>| list.as_ref().is_some_and(|l| !l.is_empty());
    if set(&rule.non_resource_urls) {
        let urls = GoStrings(rule.non_resource_urls.as_deref());
        let urls_path = path.child("nonResourceURLs");
        if namespaced {
            errs.invalid(
                urls_path.clone(),
                &urls,
                "namespaced rules cannot apply to non-resource URLs",
            );
        }
        if set(&rule.api_groups) || set(&rule.resources) || set(&rule.resource_names) {
            errs.invalid(
                urls_path,
                &urls,
                "rules cannot apply to both regular resources and non-resource URLs",
            );
        }
        return;
    }
    if !set(&rule.api_groups) {
        errs.required(
            path.child("apiGroups"),
            "resource rules must supply at least one api group",
        );
    }
    if !set(&rule.resources) {
        errs.required(
            path.child("resources"),
            "resource rules must supply at least one resource",
        );
    }
}

/// The `Role` hook.
pub(crate) fn validate_role(role: &Role, path: &FieldPath, errs: &mut FieldErrors) {
    for (i, rule) in role.rules.iter().enumerate() {
        policy_rule(rule, true, &path.child("rules").index(i), errs);
    }
}

/// The `ClusterRole` hook: rules, and the selectors of an aggregation rule.
pub(crate) fn validate_cluster_role(role: &ClusterRole, path: &FieldPath, errs: &mut FieldErrors) {
    for (i, rule) in role.rules.iter().enumerate() {
        policy_rule(rule, false, &path.child("rules").index(i), errs);
    }
    if let Some(aggregation) = &role.aggregation_rule {
        let selectors_path = path.child("aggregationRule").child("clusterRoleSelectors");
        let selectors = aggregation
            .cluster_role_selectors
            .as_deref()
            .unwrap_or_default();
        if selectors.is_empty() {
            errs.required(
                selectors_path.clone(),
                "at least one clusterRoleSelector required if aggregationRule is non-nil",
            );
        }
        for (i, selector) in selectors.iter().enumerate() {
            validate_label_selector(selector, &selectors_path.index(i), errs);
            if !selector_converts(selector) {
                // Upstream prints the selector it failed to build: none.
                errs.invalid(
                    selectors_path.index(i),
                    Raw("\"null\""),
                    "invalid label selector.",
                );
            }
        }
    }
}

/// The role reference of a binding: the RBAC group, a kind among `kinds`, a
/// name.
fn role_ref(role_ref: &RoleRef, kinds: &[&str], path: &FieldPath, errs: &mut FieldErrors) {
    let ref_path = path.child("roleRef");
    if role_ref.api_group != RBAC_GROUP {
        errs.not_supported(
            ref_path.child("apiGroup"),
            &role_ref.api_group,
            &[RBAC_GROUP],
        );
    }
    if !kinds.contains(&role_ref.kind.as_str()) {
        errs.not_supported(ref_path.child("kind"), &role_ref.kind, kinds);
    }
    // An empty name is the field rule's `Required`.
    if !role_ref.name.is_empty() {
        path_segment_name(&role_ref.name, &ref_path.child("name"), errs);
    }
}

/// `ValidateRoleBindingSubject`.
fn subject(subject: &Subject, namespaced: bool, path: &FieldPath, errs: &mut FieldErrors) {
    let group = subject.api_group.as_deref().unwrap_or_default();
    match subject.kind.as_str() {
        "ServiceAccount" => {
            if !subject.name.is_empty() {
                dns1123_subdomain(&subject.name, &path.child("name"), errs);
            }
            if !group.is_empty() {
                errs.not_supported(path.child("apiGroup"), group, &[""]);
            }
            if !namespaced && subject.namespace.as_deref().unwrap_or_default().is_empty() {
                errs.required(path.child("namespace"), "");
            }
        }
        "User" | "Group" => {
            if group != RBAC_GROUP {
                errs.not_supported(path.child("apiGroup"), group, &[RBAC_GROUP]);
            }
        }
        other => errs.not_supported(
            path.child("kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        ),
    }
}

/// The `RoleBinding` hook.
pub(crate) fn validate_role_binding(
    binding: &RoleBinding,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    role_ref(&binding.role_ref, &["Role", "ClusterRole"], path, errs);
    for (i, s) in binding.subjects.iter().flatten().enumerate() {
        subject(s, true, &path.child("subjects").index(i), errs);
    }
}

/// The `ClusterRoleBinding` hook.
pub(crate) fn validate_cluster_role_binding(
    binding: &ClusterRoleBinding,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    role_ref(&binding.role_ref, &["ClusterRole"], path, errs);
    for (i, s) in binding.subjects.iter().flatten().enumerate() {
        subject(s, false, &path.child("subjects").index(i), errs);
    }
}

/// A role reference as Go prints it.
struct GoRoleRef<'a>(&'a RoleRef);

impl std::fmt::Debug for GoRoleRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = self.0;
        write!(
            f,
            "rbac.RoleRef{{APIGroup:{:?}, Kind:{:?}, Name:{:?}}}",
            r.api_group, r.kind, r.name
        )
    }
}

/// A binding's role reference never changes.
fn immutable_role_ref(new: &RoleRef, old: &RoleRef, path: &FieldPath, errs: &mut FieldErrors) {
    if new != old {
        errs.invalid(
            path.child("roleRef"),
            GoRoleRef(new),
            "cannot change roleRef",
        );
    }
}

/// The `RoleBinding` update hook.
pub(crate) fn validate_role_binding_update(
    new: &RoleBinding,
    old: &RoleBinding,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    immutable_role_ref(&new.role_ref, &old.role_ref, path, errs);
}

/// The `ClusterRoleBinding` update hook.
pub(crate) fn validate_cluster_role_binding_update(
    new: &ClusterRoleBinding,
    old: &ClusterRoleBinding,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    immutable_role_ref(&new.role_ref, &old.role_ref, path, errs);
}
