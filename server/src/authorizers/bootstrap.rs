//! Upstream's bootstrap RBAC policy: the roles and bindings kube-apiserver
//! 1.32 creates at start when RBAC is on (cluster-admin, admin, edit, view,
//! the `system:` roles of the control plane, nodes, discovery and every
//! built-in controller), captured from a running kube-apiserver 1.32 in
//! `bootstrap-policy.json` by `capture-bootstrap-policy.sh KUBECONFIG`.
//!
//! At every start they are reconciled as upstream's RBAC bootstrap hook does:
//! a missing object is created; one that exists and is not opted out
//! (`rbac.authorization.kubernetes.io/autoupdate: "false"`) gets what it
//! lacks of the policy's: labels and annotations (its own values win), the
//! rules the policy grants and its rules do not cover, aggregation
//! selectors, and subjects. Nothing it has beyond the policy is removed. A
//! binding whose role reference differs is replaced, keeping its subjects.

use std::collections::BTreeMap;

use kapi_api_types::rbac::v1::rolebinding::Subject;
use kapi_api_types::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding, role};
use kapi_runtime::Resource;
use kapi_runtime::meta::{DeleteOptions, ObjectMeta};
use serde::Deserialize;

use super::rbac::rules::PolicyRule;
use crate::api_error::{ApiError, ApiResult};
use crate::body::{Input, Object};
use crate::registry::{Registry, WriteOptions};
use crate::scope::Scope;

/// The policy, as the four kinds' objects in JSON.
const POLICY: &str = include_str!("bootstrap-policy.json");

/// The annotation that opts an object out of reconciliation.
const AUTOUPDATE: &str = "rbac.authorization.kubernetes.io/autoupdate";

/// One object of the policy, by its `kind`.
#[derive(Deserialize)]
#[serde(tag = "kind")]
enum PolicyObject {
    ClusterRole(ClusterRole),
    ClusterRoleBinding(ClusterRoleBinding),
    Role(Role),
    RoleBinding(RoleBinding),
}

/// The policy's objects, read typed.
fn policy() -> Result<Vec<PolicyObject>, serde_json::Error> {
    serde_json::from_str(POLICY)
}

/// Reconciles every object of the policy with the stored ones. The objects
/// are handled together, so the store commits the writes in a few batches
/// instead of one by one.
pub async fn ensure(registry: &Registry) {
    let objects = match policy() {
        Ok(objects) => objects,
        Err(e) => {
            tracing::error!(error = %e, "the bootstrap RBAC policy does not parse");
            return;
        }
    };
    let writes = objects.into_iter().map(|object| async move {
        match object {
            PolicyObject::ClusterRole(o) => reconcile(registry, o).await,
            PolicyObject::ClusterRoleBinding(o) => reconcile(registry, o).await,
            PolicyObject::Role(o) => reconcile(registry, o).await,
            PolicyObject::RoleBinding(o) => reconcile(registry, o).await,
        }
    });
    futures::future::join_all(writes).await;
}

/// A kind of the policy: what a stored object may lack of the policy's.
trait Reconciled: Resource + Clone + PartialEq + Send + Sync + 'static {
    /// Adds what `self` lacks of `expected` (rules, aggregation selectors,
    /// subjects, the role reference); labels and annotations are merged by
    /// the caller.
    fn take_lacking(&mut self, expected: &Self);

    /// Whether the role reference differs (a binding's cannot change: it is
    /// replaced).
    fn other_role(&self, _other: &Self) -> bool {
        false
    }
}

impl Reconciled for ClusterRole {
    fn take_lacking(&mut self, expected: &ClusterRole) {
        add_rules(&mut self.rules, &expected.rules);
        let wanted = expected
            .aggregation_rule
            .as_ref()
            .and_then(|a| a.cluster_role_selectors.as_ref());
        let have = self
            .aggregation_rule
            .as_ref()
            .and_then(|a| a.cluster_role_selectors.as_ref());
        let lacking: Vec<_> = wanted
            .into_iter()
            .flatten()
            .filter(|s| have.is_none_or(|have| !have.contains(s)))
            .cloned()
            .collect();
        if !lacking.is_empty() {
            self.aggregation_rule
                .get_or_insert_with(Default::default)
                .cluster_role_selectors
                .get_or_insert_with(Vec::new)
                .extend(lacking);
        }
    }
}

impl Reconciled for Role {
    fn take_lacking(&mut self, expected: &Role) {
        add_rules(&mut self.rules, &expected.rules);
    }
}

impl Reconciled for ClusterRoleBinding {
    fn take_lacking(&mut self, expected: &ClusterRoleBinding) {
        self.role_ref = expected.role_ref.clone();
        add_subjects(&mut self.subjects, &expected.subjects);
    }

    fn other_role(&self, other: &ClusterRoleBinding) -> bool {
        self.role_ref != other.role_ref
    }
}

impl Reconciled for RoleBinding {
    fn take_lacking(&mut self, expected: &RoleBinding) {
        self.role_ref = expected.role_ref.clone();
        add_subjects(&mut self.subjects, &expected.subjects);
    }

    fn other_role(&self, other: &RoleBinding) -> bool {
        self.role_ref != other.role_ref
    }
}

/// The rules `expected` grants that `rules` do not cover, added as simple
/// rules.
fn add_rules(rules: &mut Vec<role::PolicyRule>, expected: &[role::PolicyRule]) {
    let simple = |list: &[role::PolicyRule]| -> Vec<PolicyRule> {
        list.iter().map(PolicyRule::from).collect()
    };
    let missing = super::escalation::uncovered(&simple(rules), &simple(expected));
    rules.extend(missing.into_iter().map(|rule| {
        let list = |l: Vec<String>| (!l.is_empty()).then_some(l);
        role::PolicyRule {
            verbs: rule.verbs,
            api_groups: list(rule.api_groups),
            resources: list(rule.resources),
            resource_names: list(rule.resource_names),
            non_resource_urls: list(rule.non_resource_urls),
        }
    }));
}

/// The subjects of `expected` that `subjects` lack, added.
fn add_subjects(subjects: &mut Option<Vec<Subject>>, expected: &Option<Vec<Subject>>) {
    let have = subjects.as_deref().unwrap_or_default();
    let lacking: Vec<Subject> = expected
        .iter()
        .flatten()
        .filter(|s| !have.iter().any(|h| same_subject(h, s)))
        .cloned()
        .collect();
    if !lacking.is_empty() {
        subjects.get_or_insert_with(Vec::new).extend(lacking);
    }
}

/// Creates `expected` where it is missing, or adds what the stored object
/// lacks of it.
async fn reconcile<K: Reconciled>(registry: &Registry, expected: K) {
    let plural = K::INFO.plural;
    let meta = expected.metadata();
    let name = meta.name.clone().unwrap_or_default();
    let namespace = meta.namespace.clone();
    let existing = match crate::loopback::get::<K>(registry, namespace.as_deref(), &name).await {
        Ok(Some(existing)) => existing,
        Ok(None) => return create(registry, expected).await,
        Err(e) => {
            tracing::warn!(plural, %name, error = ?e.0.message, "cannot read to reconcile");
            return;
        }
    };
    let Some(result) = reconciled(&existing, &expected) else {
        return;
    };
    let written = if existing.other_role(&result) {
        replace(registry, &name, result).await
    } else {
        let change = |current: &mut K| {
            if let Some(again) = reconciled(current, &expected) {
                *current = again;
            }
            Ok(())
        };
        crate::loopback::edit::<K>(registry, namespace.as_deref(), &name, &change).await
    };
    match written {
        Ok(()) => tracing::info!(plural, %name, "reconciled with the bootstrap policy"),
        Err(e) => tracing::warn!(plural, %name, error = ?e.0.message, "could not reconcile"),
    }
}

/// The scope of the kind `K` in `namespace`.
fn scope_of<K: Resource>(
    registry: &Registry,
    namespace: Option<&str>,
) -> ApiResult<(kapi_runtime::scheme::KindEntry, Option<String>)> {
    let info = K::INFO;
    let entry = registry
        .scheme()
        .get(info.group, info.version, info.plural)
        .cloned()
        .ok_or_else(|| ApiError::internal(format!("{} are not served", info.plural)))?;
    Ok((entry, namespace.map(str::to_owned)))
}

/// The policy's writes are kube-apiserver's own (its bootstrap hook writes
/// through the loopback client).
fn as_apiserver<'a>() -> WriteOptions<'a> {
    WriteOptions {
        manager: "kube-apiserver",
        ..WriteOptions::default()
    }
}

/// Creates `object` (a 409 means another server was first).
async fn create<K: Reconciled>(registry: &Registry, object: K) {
    let plural = K::INFO.plural;
    let name = object.metadata().name.clone().unwrap_or_default();
    let namespace = object.metadata().namespace.clone();
    let created = match scope_of::<K>(registry, namespace.as_deref()) {
        Ok((entry, namespace)) => {
            let scope = Scope::new(&entry, namespace.as_deref());
            let input = Input::typed(Object::new(Box::new(object)));
            registry
                .create(scope, input, as_apiserver())
                .await
                .map(drop)
        }
        Err(e) => Err(e),
    };
    match created {
        Ok(()) => tracing::info!(plural, %name, "created"),
        Err(e) if e.code() == 409 => {}
        Err(e) => tracing::warn!(plural, %name, error = ?e.0.message, "could not create"),
    }
}

/// A binding with another role reference: deleted and created anew (a
/// role reference cannot change).
async fn replace<K: Reconciled>(
    registry: &Registry,
    name: &str,
    mut replacement: K,
) -> ApiResult<()> {
    let namespace = replacement.metadata().namespace.clone();
    let (entry, namespace) = scope_of::<K>(registry, namespace.as_deref())?;
    let scope = Scope::new(&entry, namespace.as_deref());
    registry
        .delete(
            scope,
            name,
            &DeleteOptions::default(),
            &WriteOptions::default(),
        )
        .await?;
    let meta = replacement.metadata_mut();
    meta.uid = None;
    meta.resource_version = None;
    meta.creation_timestamp = None;
    meta.managed_fields = None;
    create(registry, replacement).await;
    Ok(())
}

/// The stored object with what it lacks of the policy's, unless it opted
/// out or lacks nothing (`None`).
fn reconciled<K: Reconciled>(existing: &K, expected: &K) -> Option<K> {
    let meta = existing.metadata();
    let opted_out = meta
        .annotations
        .as_ref()
        .and_then(|a| a.get(AUTOUPDATE))
        .is_some_and(|v| v == "false");
    if opted_out {
        return None;
    }
    let mut result = existing.clone();
    let wanted = expected.metadata();
    let merged = |wanted: &Option<BTreeMap<String, String>>,
                  have: &Option<BTreeMap<String, String>>| {
        let mut merged = wanted.clone().unwrap_or_default();
        merged.extend(have.clone().unwrap_or_default());
        (!merged.is_empty()).then_some(merged)
    };
    let labels = merged(&wanted.labels, &meta.labels);
    let annotations = merged(&wanted.annotations, &meta.annotations);
    let result_meta: &mut ObjectMeta = result.metadata_mut();
    if labels.is_some() {
        result_meta.labels = labels;
    }
    if annotations.is_some() {
        result_meta.annotations = annotations;
    }
    result.take_lacking(expected);
    (result != *existing).then_some(result)
}

/// Subjects are the same when kind, group, name and namespace are (an
/// empty API group of a User or Group is rbac.authorization.k8s.io's).
fn same_subject(a: &Subject, b: &Subject) -> bool {
    let group = |s: &Subject| {
        let group = s.api_group.as_deref().unwrap_or_default();
        if group.is_empty() && s.kind != "ServiceAccount" {
            "rbac.authorization.k8s.io".to_owned()
        } else {
            group.to_owned()
        }
    };
    a.kind == b.kind
        && a.name == b.name
        && a.namespace.as_deref().unwrap_or_default() == b.namespace.as_deref().unwrap_or_default()
        && group(a) == group(b)
}

/// The rules of the policy's ClusterRole `name` (none when it has no such
/// role).
pub fn cluster_role_rules(name: &str) -> Vec<PolicyRule> {
    let objects = policy().unwrap_or_default();
    objects
        .into_iter()
        .find_map(|o| match o {
            PolicyObject::ClusterRole(role) if role.metadata.name.as_deref() == Some(name) => {
                Some(role.rules.iter().map(PolicyRule::from).collect())
            }
            _ => None,
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn typed<T: serde::de::DeserializeOwned>(value: Value) -> T {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_stored_role_gets_what_it_lacks_and_keeps_the_rest() {
        let expected: ClusterRole = typed(
            json!({"metadata": {"name": "r", "labels": {"a": "policy", "b": "policy"},
                "annotations": {AUTOUPDATE: "true"}},
            "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]}),
        );
        let existing: ClusterRole =
            typed(json!({"metadata": {"name": "r", "labels": {"a": "mine"}},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
                {"verbs": ["delete"], "apiGroups": [""], "resources": ["secrets"]}]}));
        let result = reconciled(&existing, &expected).unwrap();
        let result_json = serde_json::to_value(&result).unwrap();
        assert_eq!(
            result_json["metadata"]["labels"],
            json!({"a": "mine", "b": "policy"})
        );
        assert_eq!(
            result_json["metadata"]["annotations"],
            json!({AUTOUPDATE: "true"})
        );
        assert_eq!(
            result_json["rules"],
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
                {"verbs": ["delete"], "apiGroups": [""], "resources": ["secrets"]},
                {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}])
        );
        // Reconciled once, nothing is lacking.
        assert_eq!(reconciled(&result, &expected), None);
        // Opted out: left alone.
        let mut opted_out = existing.clone();
        opted_out.metadata.annotations = Some(BTreeMap::from([(
            AUTOUPDATE.to_owned(),
            "false".to_owned(),
        )]));
        assert_eq!(reconciled(&opted_out, &expected), None);
    }

    #[test]
    fn a_stored_binding_gets_the_lacking_subjects_and_the_policys_role() {
        let expected: ClusterRoleBinding = typed(json!({"metadata": {"name": "b"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "g"},
                {"kind": "ServiceAccount", "name": "sa", "namespace": "kube-system"}]}));
        let existing: ClusterRoleBinding = typed(json!({"metadata": {"name": "b"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "old"},
            "subjects": [{"kind": "Group", "name": "g"}, {"kind": "User", "name": "u"}]}));
        let result = reconciled(&existing, &expected).unwrap();
        assert_eq!(result.role_ref.name, "r");
        assert!(existing.other_role(&result));
        assert_eq!(
            serde_json::to_value(&result.subjects).unwrap(),
            json!([{"kind": "Group", "name": "g"}, {"kind": "User", "name": "u"},
                {"kind": "ServiceAccount", "name": "sa", "namespace": "kube-system"}])
        );
    }

    #[test]
    fn the_policy_holds_upstreams_roles() {
        let objects = policy().unwrap();
        let named = |kind: &str, name: &str| {
            objects.iter().any(|o| {
                let (k, meta) = match o {
                    PolicyObject::ClusterRole(r) => ("ClusterRole", &r.metadata),
                    PolicyObject::ClusterRoleBinding(b) => ("ClusterRoleBinding", &b.metadata),
                    PolicyObject::Role(r) => ("Role", &r.metadata),
                    PolicyObject::RoleBinding(b) => ("RoleBinding", &b.metadata),
                };
                k == kind && meta.name.as_deref() == Some(name)
            })
        };
        for role in [
            "cluster-admin",
            "admin",
            "edit",
            "view",
            "system:discovery",
            "system:public-info-viewer",
            "system:kube-controller-manager",
            "system:kube-scheduler",
            "system:node",
            "system:controller:namespace-controller",
        ] {
            assert!(named("ClusterRole", role), "{role}");
        }
        assert!(named("ClusterRoleBinding", "cluster-admin"));
        assert!(named("Role", "system::leader-locking-kube-scheduler"));
        assert_eq!(objects.len(), 123);
        assert!(!cluster_role_rules("system:node").is_empty());
    }
}
