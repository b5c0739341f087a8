//! The filters in front of every path, in kube-apiserver's order
//! (`DefaultBuildHandlerChain`, outermost first): request info -> deadline
//! -> authentication -> audit -> impersonation -> priority and fairness ->
//! authorization -> the router. Each is an axum middleware with its own
//! state, none with the whole server's; the first parses the request once
//! into a [`RequestInfo`](crate::request_info::RequestInfo) the others read.

mod audit;
mod authentication;
pub mod authorization;
mod deadline;
pub mod impersonation;
mod priority;
mod request_info;

use std::sync::Arc;

use axum::Router;
use axum::middleware::{from_fn, from_fn_with_state};

use crate::audit::Auditor;
use crate::authn::Authenticator;
use crate::authz::Authorizer;
use crate::flowcontrol::Limiter;
use crate::registry::Registry;

/// What the filters hold: the authenticator, the auditor, the limiter and
/// the authorizer, and the registry the first and last read objects from.
#[derive(Clone)]
pub struct Filters {
    /// Who sends each request.
    pub authenticator: Arc<Authenticator>,
    /// The audit policy and log, if any.
    pub auditor: Option<Arc<Auditor>>,
    /// Priority and fairness, or the in-flight limits.
    pub limiter: Limiter,
    /// What each user may do.
    pub authorizer: Arc<Authorizer>,
    /// The objects authentication and authorization read (tokens' secrets,
    /// roles), and the kinds audit names.
    pub registry: Registry,
}

impl Filters {
    /// Puts the filters in front of `router`.
    pub fn wrap<S: Clone + Send + Sync + 'static>(self, router: Router<S>) -> Router<S> {
        // Each filter's state sits behind one Arc: axum clones a state for
        // every request, and one count shared across threads is cheaper to
        // touch than the several a registry holds.
        let authorization = Arc::new(authorization::Authorization {
            authorizer: self.authorizer.clone(),
            registry: self.registry.clone(),
        });
        // Layers run in the opposite order of their adding: the last added
        // sees the request first.
        router
            .layer(from_fn_with_state(
                authorization.clone(),
                authorization::authorize,
            ))
            .layer(from_fn_with_state(
                Arc::new(priority::Priority {
                    limiter: self.limiter,
                    registry: self.registry.clone(),
                }),
                priority::limit,
            ))
            .layer(from_fn_with_state(
                authorization,
                impersonation::impersonate,
            ))
            .layer(from_fn_with_state(
                Arc::new(audit::Audit {
                    auditor: self.auditor.clone(),
                    registry: self.registry.clone(),
                }),
                audit::audit,
            ))
            .layer(from_fn_with_state(
                Arc::new(authentication::Authentication {
                    authenticator: self.authenticator,
                    auditor: self.auditor,
                    registry: self.registry,
                }),
                authentication::authenticate,
            ))
            .layer(from_fn(deadline::check_timeout))
            .layer(from_fn(request_info::parse))
    }
}
