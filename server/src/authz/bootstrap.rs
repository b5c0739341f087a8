//! Upstream's bootstrap RBAC policy: the roles and bindings kube-apiserver
//! 1.32 creates at start when RBAC is on (cluster-admin, admin, edit, view,
//! the `system:` roles of the control plane, nodes, discovery and every
//! built-in controller), captured from the reference server in
//! `bootstrap-policy.json` by `capture-bootstrap-policy.sh`.

use serde_json::Value;

use super::rbac::rules::PolicyRule;
use crate::registry::Registry;

/// The policy, as JSON objects.
const POLICY: &str = include_str!("bootstrap-policy.json");

/// Creates every object of the policy that does not exist yet (one that
/// exists is left as it is). The writes go out together, so the store
/// commits them in a few batches instead of one by one.
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
        Some(registry.ensure(("rbac.authorization.k8s.io", "v1", plural), object))
    });
    futures::future::join_all(writes).await;
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
