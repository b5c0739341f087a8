//! The RBAC authorizer: the [`Policy`] of the watch caches' roles and
//! bindings, built again only when one of them changed.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;

use super::{Policy, RbacObjects};
use crate::authz::{Attributes, Authorize, Decision, Rule, Rules};
use crate::cache::{ObjectRef, Objects, ResourceCache};
use crate::registry::Registry;
use crate::user::UserInfo;

/// The four RBAC resources.
const RESOURCES: [(&str, &str, &str); 4] = [
    ("rbac.authorization.k8s.io", "v1", "clusterroles"),
    ("rbac.authorization.k8s.io", "v1", "roles"),
    ("rbac.authorization.k8s.io", "v1", "clusterrolebindings"),
    ("rbac.authorization.k8s.io", "v1", "rolebindings"),
];

/// RBAC's policy, built from the watch caches' objects and built again when
/// any of the four resources' objects changed (the caches share unchanged
/// maps, so a change is a pointer comparison). The caches are looked up
/// once; each request then reads four map pointers.
#[derive(Default)]
pub struct RbacAuthorizer {
    caches: tokio::sync::OnceCell<Vec<Arc<ResourceCache>>>,
    built: Mutex<Option<(Vec<Objects>, Arc<Policy>)>>,
}

impl RbacAuthorizer {
    /// The policy now (for the escalation checks of role writes).
    pub async fn policy(&self, registry: &Registry) -> Arc<Policy> {
        let caches = self
            .caches
            .get_or_init(|| async {
                let mut caches = Vec::with_capacity(RESOURCES.len());
                for resource in RESOURCES {
                    if let Some(cache) = registry.listed_cache(resource).await {
                        caches.push(cache);
                    }
                }
                caches
            })
            .await;
        let now: Option<Vec<Objects>> = caches.iter().map(|cache| cache.objects()).collect();
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        // A cache listing again cannot answer for a moment: the last policy
        // stands meanwhile rather than none.
        let now = match (now, built.as_ref()) {
            (Some(now), _) => now,
            (None, Some((_, policy))) => return policy.clone(),
            (None, None) => vec![Default::default(); caches.len()],
        };
        if let Some((seen, policy)) = built.as_ref()
            && seen.iter().zip(&now).all(|(a, b)| a.ptr_eq(b))
        {
            return policy.clone();
        }
        // Each object decoded once (the cache keeps their JSON), read typed.
        let decoded = |i: usize| -> Vec<ObjectRef<'_>> {
            now.get(i)
                .into_iter()
                .flat_map(|objects| objects.values())
                .filter_map(|cached| cached.object().ok())
                .collect()
        };
        let parts = [decoded(0), decoded(1), decoded(2), decoded(3)];
        let policy = Arc::new(Policy::new(&RbacObjects {
            cluster_roles: parts[0].iter().filter_map(|o| o.downcast_ref()).collect(),
            roles: parts[1].iter().filter_map(|o| o.downcast_ref()).collect(),
            cluster_role_bindings: parts[2].iter().filter_map(|o| o.downcast_ref()).collect(),
            role_bindings: parts[3].iter().filter_map(|o| o.downcast_ref()).collect(),
        }));
        *built = Some((now, policy.clone()));
        policy
    }
}

#[async_trait]
impl Authorize for RbacAuthorizer {
    async fn authorize(&self, request: &Attributes<'_>, registry: &Registry) -> Decision {
        self.policy(registry).await.authorize(request)
    }

    async fn allows(&self, request: &Attributes<'_>, registry: &Registry) -> bool {
        self.policy(registry).await.allows(request)
    }

    async fn rules_for(&self, user: &UserInfo, namespace: &str, registry: &Registry) -> Rules {
        let (rules, errors) = self.policy(registry).await.rules_for(user, namespace);
        Rules {
            everything: false,
            rules: rules
                .into_iter()
                .map(|rule| Rule {
                    verbs: rule.verbs,
                    api_groups: rule.api_groups,
                    resources: rule.resources,
                    resource_names: rule.resource_names,
                    non_resource_urls: rule.non_resource_urls,
                })
                .collect(),
            errors,
        }
    }
}
