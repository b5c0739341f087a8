//! The authorizers `--authorization-mode` names, asked in order after the
//! privileged group, as kube-apiserver's union authorizer asks them: the
//! first to allow or deny decides; when none has an opinion the request is
//! forbidden, with their reasons.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use super::node::NodeAuthorizer;
use super::rbac::{Policy, RbacObjects};
use super::{Attributes, Decision};
use crate::registry::Registry;
use crate::user::MASTERS;

/// An authorization mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Everyone may do everything.
    AlwaysAllow,
    /// The roles and bindings of rbac.authorization.k8s.io.
    Rbac,
    /// What kubelets may do: their own node's objects.
    Node,
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(text: &str) -> Result<Mode, String> {
        match text {
            "AlwaysAllow" => Ok(Mode::AlwaysAllow),
            "RBAC" => Ok(Mode::Rbac),
            "Node" => Ok(Mode::Node),
            other => Err(format!(
                "unknown authorization mode {other:?} (supported: AlwaysAllow, Node, RBAC)"
            )),
        }
    }
}

/// The configured authorizers.
pub struct Authorizer {
    modes: Vec<Mode>,
    rbac: RbacPolicy,
    node: NodeAuthorizer,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("modes", &self.modes)
            .finish_non_exhaustive()
    }
}

impl Default for Authorizer {
    /// Everyone may do everything.
    fn default() -> Authorizer {
        Authorizer::new(vec![Mode::AlwaysAllow])
    }
}

impl Authorizer {
    /// The authorizers of `modes`, in that order.
    pub fn new(modes: Vec<Mode>) -> Authorizer {
        Authorizer {
            modes,
            rbac: RbacPolicy::default(),
            node: NodeAuthorizer::default(),
        }
    }

    /// The modes, in order.
    pub fn modes(&self) -> &[Mode] {
        &self.modes
    }

    /// The decision on `request`, reading RBAC's objects from `registry`'s
    /// watch caches.
    pub async fn authorize(&self, request: &Attributes<'_>, registry: &Registry) -> Decision {
        // system:masters may do anything, before any mode is asked.
        if request.user.in_group(MASTERS) {
            return Decision::Allow(String::new());
        }
        let mut reasons = Vec::new();
        for mode in &self.modes {
            let decision = match mode {
                Mode::AlwaysAllow => Decision::Allow(String::new()),
                Mode::Rbac => self.rbac.current(registry).await.authorize(request),
                Mode::Node => self.node.authorize(request, registry).await,
            };
            match decision {
                Decision::NoOpinion(reason) => {
                    if !reason.is_empty() {
                        reasons.push(reason);
                    }
                }
                decided => return decided,
            }
        }
        Decision::NoOpinion(reasons.join("\n"))
    }

    /// Whether `request` is allowed: [`Authorizer::authorize`]'s yes or no,
    /// without building reasons (the request filter's question; it asks
    /// for the reasons only to word a refusal).
    pub async fn allows(&self, request: &Attributes<'_>, registry: &Registry) -> bool {
        if request.user.in_group(MASTERS) {
            return true;
        }
        for mode in &self.modes {
            let allowed = match mode {
                Mode::AlwaysAllow => true,
                Mode::Rbac => self.rbac.current(registry).await.allows(request),
                Mode::Node => matches!(
                    self.node.authorize(request, registry).await,
                    Decision::Allow(_)
                ),
            };
            if allowed {
                return true;
            }
        }
        false
    }

    /// RBAC's policy now (for the rules reviews).
    pub async fn rbac_policy(&self, registry: &Registry) -> Arc<Policy> {
        self.rbac.current(registry).await
    }
}

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
struct RbacPolicy {
    caches: tokio::sync::OnceCell<Vec<Arc<crate::cache::ResourceCache>>>,
    built: Mutex<Option<(Vec<crate::cache::Objects>, Arc<Policy>)>>,
}

impl RbacPolicy {
    async fn current(&self, registry: &Registry) -> Arc<Policy> {
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
        let now: Option<Vec<crate::cache::Objects>> =
            caches.iter().map(|cache| cache.objects()).collect();
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
        let json = |objects: &crate::cache::Objects| -> Vec<Value> {
            objects
                .values()
                .filter_map(|cached| cached.json().ok())
                .filter_map(|bytes| serde_json::from_slice(bytes).ok())
                .collect()
        };
        let part = |i: usize| now.get(i).map(json).unwrap_or_default();
        let policy = Arc::new(Policy::new(&RbacObjects {
            cluster_roles: part(0),
            roles: part(1),
            cluster_role_bindings: part(2),
            role_bindings: part(3),
        }));
        *built = Some((now, policy.clone()));
        policy
    }
}
