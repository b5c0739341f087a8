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

use serde_json::{Map, Value, json};

use super::rbac::rules::PolicyRule;
use crate::loopback::Loopback;
use crate::registry::Registry;
use crate::user::UserInfo;

/// The policy, as JSON objects.
const POLICY: &str = include_str!("bootstrap-policy.json");

/// The annotation that opts an object out of reconciliation.
const AUTOUPDATE: &str = "rbac.authorization.kubernetes.io/autoupdate";

/// Reconciles every object of the policy with the stored ones. The objects
/// are handled together, so the store commits the writes in a few batches
/// instead of one by one.
pub async fn ensure(registry: &Registry) {
    let objects: Vec<Value> = match serde_json::from_str(POLICY) {
        Ok(objects) => objects,
        Err(e) => {
            tracing::error!(error = %e, "the bootstrap RBAC policy does not parse");
            return;
        }
    };
    let writes = objects.into_iter().filter_map(|object| {
        let plural = match object["kind"].as_str() {
            Some("ClusterRole") => "clusterroles",
            Some("ClusterRoleBinding") => "clusterrolebindings",
            Some("Role") => "roles",
            Some("RoleBinding") => "rolebindings",
            _ => return None,
        };
        Some(reconcile(registry, plural, object))
    });
    futures::future::join_all(writes).await;
}

/// Creates `expected` where it is missing, or adds what the stored object
/// lacks of it.
async fn reconcile(registry: &Registry, plural: &str, expected: Value) {
    let resource = ("rbac.authorization.k8s.io", "v1", plural);
    let meta = &expected["metadata"];
    let name = meta["name"].as_str().unwrap_or_default().to_owned();
    let namespace = meta["namespace"].as_str().map(str::to_owned);
    let existing = match registry.read(resource, namespace.as_deref(), &name).await {
        Ok(Some(existing)) => existing,
        Ok(None) => return registry.ensure(resource, expected).await,
        Err(e) => {
            tracing::warn!(plural, %name, error = ?e.0.message, "cannot read to reconcile");
            return;
        }
    };
    let Some(result) = reconciled(&existing, &expected) else {
        return;
    };
    let written = if existing["roleRef"] == result["roleRef"] {
        let change = |current: &mut Value| {
            if let Some(again) = reconciled(current, &expected) {
                *current = again;
            }
            Ok(())
        };
        Loopback::edit(registry, resource, namespace.as_deref(), &name, &change).await
    } else {
        replace(registry, resource, namespace.as_deref(), &name, result).await
    };
    match written {
        Ok(()) => tracing::info!(plural, %name, "reconciled with the bootstrap policy"),
        Err(e) => tracing::warn!(plural, %name, error = ?e.0.message, "could not reconcile"),
    }
}

/// A binding with another role reference: deleted and created anew (a
/// role reference cannot change).
async fn replace(
    registry: &Registry,
    (group, version, plural): crate::loopback::Resource<'_>,
    namespace: Option<&str>,
    name: &str,
    mut replacement: Value,
) -> crate::api_error::ApiResult<()> {
    let Some(entry) = registry.scheme().get(group, version, plural).cloned() else {
        return Ok(());
    };
    let scope = crate::scope::Scope::new(&entry, namespace);
    let options = kapi_runtime::meta::DeleteOptions::default();
    registry
        .delete(scope, name, &options, &UserInfo::apiserver())
        .await?;
    let meta = &mut replacement["metadata"];
    for stored in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "managedFields",
    ] {
        if let Some(meta) = meta.as_object_mut() {
            meta.remove(stored);
        }
    }
    registry.ensure((group, version, plural), replacement).await;
    Ok(())
}

/// The stored object with what it lacks of the policy's, unless it opted
/// out or lacks nothing (`None`).
fn reconciled(existing: &Value, expected: &Value) -> Option<Value> {
    let meta = &existing["metadata"];
    if meta["annotations"][AUTOUPDATE] == "false" {
        return None;
    }
    let mut result = existing.clone();
    for field in ["labels", "annotations"] {
        let merged = merged_map(&expected["metadata"][field], &meta[field]);
        if !merged.is_empty() {
            result["metadata"][field] = Value::Object(merged);
        }
    }
    if expected.get("rules").is_some() {
        let rules = |v: &Value| -> Vec<PolicyRule> {
            serde_json::from_value(v["rules"].clone()).unwrap_or_default()
        };
        let missing = super::escalation::uncovered(&rules(existing), &rules(expected));
        if !missing.is_empty() {
            let mut all = existing["rules"].as_array().cloned().unwrap_or_default();
            all.extend(missing.iter().map(rule_json));
            result["rules"] = Value::Array(all);
        }
        let selectors = |v: &Value| {
            v["aggregationRule"]["clusterRoleSelectors"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };
        let have = selectors(existing);
        let lacking: Vec<Value> = selectors(expected)
            .into_iter()
            .filter(|s| !have.contains(s))
            .collect();
        if !lacking.is_empty() {
            let all: Vec<Value> = have.into_iter().chain(lacking).collect();
            result["aggregationRule"] = json!({ "clusterRoleSelectors": all });
        }
    }
    if expected.get("roleRef").is_some() {
        result["roleRef"] = expected["roleRef"].clone();
        let have = existing["subjects"].as_array().cloned().unwrap_or_default();
        let lacking: Vec<Value> = expected["subjects"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| !have.iter().any(|h| same_subject(h, s)))
            .cloned()
            .collect();
        if !lacking.is_empty() {
            let all: Vec<Value> = have.into_iter().chain(lacking).collect();
            result["subjects"] = Value::Array(all);
        }
    }
    (result != *existing).then_some(result)
}

/// `expected`'s entries with `existing`'s over them.
fn merged_map(expected: &Value, existing: &Value) -> Map<String, Value> {
    let mut merged = expected.as_object().cloned().unwrap_or_default();
    for (key, value) in existing.as_object().into_iter().flatten() {
        merged.insert(key.clone(), value.clone());
    }
    merged
}

/// Subjects are the same when kind, group, name and namespace are (an
/// empty API group of a User or Group is rbac.authorization.k8s.io's).
fn same_subject(a: &Value, b: &Value) -> bool {
    let group = |s: &Value| {
        let group = s["apiGroup"].as_str().unwrap_or_default();
        if group.is_empty() && s["kind"] != "ServiceAccount" {
            "rbac.authorization.k8s.io".to_owned()
        } else {
            group.to_owned()
        }
    };
    let field = |s: &Value, f: &str| s[f].as_str().unwrap_or_default().to_owned();
    ["kind", "name", "namespace"]
        .iter()
        .all(|f| field(a, f) == field(b, f))
        && group(a) == group(b)
}

/// A rule as the API writes it (empty lists left out).
fn rule_json(rule: &PolicyRule) -> Value {
    let mut value = serde_json::to_value(rule).unwrap_or_default();
    if let Some(fields) = value.as_object_mut() {
        fields.retain(|_, v| v.as_array().is_none_or(|a| !a.is_empty()));
    }
    value
}

/// The rules of the policy's ClusterRole `name` (none when it has no such
/// role).
pub fn cluster_role_rules(name: &str) -> Vec<PolicyRule> {
    let objects: Vec<Value> = serde_json::from_str(POLICY).unwrap_or_default();
    objects
        .into_iter()
        .find(|o| o["kind"] == "ClusterRole" && o["metadata"]["name"] == name)
        .and_then(|role| serde_json::from_value(role["rules"].clone()).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_role_gets_what_it_lacks_and_keeps_the_rest() {
        let expected = json!({"metadata": {"name": "r", "labels": {"a": "policy", "b": "policy"},
                "annotations": {AUTOUPDATE: "true"}},
            "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]});
        let existing = json!({"metadata": {"name": "r", "labels": {"a": "mine"}},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
                {"verbs": ["delete"], "apiGroups": [""], "resources": ["secrets"]}]});
        let result = reconciled(&existing, &expected).unwrap();
        assert_eq!(
            result["metadata"]["labels"],
            json!({"a": "mine", "b": "policy"})
        );
        assert_eq!(
            result["metadata"]["annotations"],
            json!({AUTOUPDATE: "true"})
        );
        assert_eq!(
            result["rules"],
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
                {"verbs": ["delete"], "apiGroups": [""], "resources": ["secrets"]},
                {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}])
        );
        // Reconciled once, nothing is lacking.
        assert_eq!(reconciled(&result, &expected), None);
        // Opted out: left alone.
        let mut opted_out = existing.clone();
        opted_out["metadata"]["annotations"] = json!({AUTOUPDATE: "false"});
        assert_eq!(reconciled(&opted_out, &expected), None);
    }

    #[test]
    fn a_stored_binding_gets_the_lacking_subjects_and_the_policys_role() {
        let expected = json!({"metadata": {"name": "b"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "g"},
                {"kind": "ServiceAccount", "name": "sa", "namespace": "kube-system"}]});
        let existing = json!({"metadata": {"name": "b"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "old"},
            "subjects": [{"kind": "Group", "name": "g"}, {"kind": "User", "name": "u"}]});
        let result = reconciled(&existing, &expected).unwrap();
        assert_eq!(result["roleRef"]["name"], "r");
        assert_eq!(
            result["subjects"],
            json!([{"kind": "Group", "name": "g"}, {"kind": "User", "name": "u"},
                {"kind": "ServiceAccount", "name": "sa", "namespace": "kube-system"}])
        );
    }

    #[test]
    fn the_policy_holds_upstreams_roles() {
        let objects: Vec<Value> = serde_json::from_str(POLICY).unwrap();
        let named = |kind: &str, name: &str| {
            objects
                .iter()
                .any(|o| o["kind"] == kind && o["metadata"]["name"] == name)
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
    }
}
