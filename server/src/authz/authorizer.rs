//! The authorizers `--authorization-mode` names, asked in order after the
//! privileged group, as kube-apiserver's union authorizer asks them: the
//! first to allow or deny decides; when none has an opinion the request is
//! forbidden, with their reasons.

use std::sync::Arc;

use async_trait::async_trait;

use super::{Attributes, Decision, Rules};
use crate::registry::Registry;
use crate::user::{MASTERS, UserInfo};

/// One authorizer of the chain (upstream's `authorizer.Authorizer` with its
/// `RuleResolver`). It reads what it needs (roles, the pods of a node)
/// through `registry`, from the watch caches.
#[async_trait]
pub trait Authorize: Send + Sync {
    /// The decision on `request`, with the reason.
    async fn authorize(&self, request: &Attributes<'_>, registry: &Registry) -> Decision;

    /// Whether `request` is allowed: [`Authorize::authorize`]'s yes or no.
    /// An authorizer that can answer without building its reasons does so
    /// here (the request filter asks this of every request).
    async fn allows(&self, request: &Attributes<'_>, registry: &Registry) -> bool {
        matches!(self.authorize(request, registry).await, Decision::Allow(_))
    }

    /// What `user` may do in `namespace` as this authorizer sees it, for
    /// the rules reviews.
    async fn rules_for(&self, user: &UserInfo, namespace: &str, registry: &Registry) -> Rules;
}

/// Everyone may do everything (`--authorization-mode=AlwaysAllow`).
#[derive(Clone, Copy, Debug, Default)]
pub struct AlwaysAllow;

#[async_trait]
impl Authorize for AlwaysAllow {
    async fn authorize(&self, _request: &Attributes<'_>, _registry: &Registry) -> Decision {
        Decision::Allow(String::new())
    }

    async fn allows(&self, _request: &Attributes<'_>, _registry: &Registry) -> bool {
        true
    }

    async fn rules_for(&self, _user: &UserInfo, _namespace: &str, _registry: &Registry) -> Rules {
        Rules {
            everything: true,
            ..Rules::default()
        }
    }
}

/// The configured authorizers, asked in order.
pub struct Authorizer {
    chain: Vec<Arc<dyn Authorize>>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("authorizers", &self.chain.len())
            .finish_non_exhaustive()
    }
}

impl Default for Authorizer {
    /// Everyone may do everything.
    fn default() -> Authorizer {
        Authorizer::new(vec![Arc::new(AlwaysAllow)])
    }
}

impl Authorizer {
    /// The authorizers of `chain`, asked in that order.
    pub fn new(chain: Vec<Arc<dyn Authorize>>) -> Authorizer {
        Authorizer { chain }
    }

    /// The decision on `request`, each authorizer reading what it needs
    /// from `registry`'s watch caches.
    pub async fn authorize(&self, request: &Attributes<'_>, registry: &Registry) -> Decision {
        // system:masters may do anything, before any authorizer is asked.
        if request.user.in_group(MASTERS) {
            return Decision::Allow(String::new());
        }
        let mut reasons = Vec::new();
        for authorizer in &self.chain {
            match authorizer.authorize(request, registry).await {
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
        for authorizer in &self.chain {
            if authorizer.allows(request, registry).await {
                return true;
            }
        }
        false
    }

    /// What `user` may do in `namespace`, as upstream's union of rule
    /// resolvers tells it: everything for the privileged group, then each
    /// authorizer's rules and errors in order.
    pub async fn rules_for(&self, user: &UserInfo, namespace: &str, registry: &Registry) -> Rules {
        let mut all = Rules {
            everything: user.in_group(MASTERS),
            ..Rules::default()
        };
        for authorizer in &self.chain {
            let Rules {
                everything,
                rules,
                errors,
            } = authorizer.rules_for(user, namespace, registry).await;
            all.everything |= everything;
            all.rules.extend(rules);
            all.errors.extend(errors);
        }
        all
    }
}
