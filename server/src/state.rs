//! The state every handler shares: the registry and what the server keeps
//! beside it. Its own module, so the router (`app`) and the handlers
//! (`endpoints`, `discovery`, `health`) both import it and not each other.

use std::sync::Arc;

use tokio::sync::watch;

use crate::authn::Authenticator;
use crate::authz::Authorizer;
use crate::flowcontrol::Limiter;
use crate::metrics::Metrics;
use crate::openapi;
use crate::registry::Registry;

/// Shared server state.
pub struct App {
    /// The generic registry.
    pub registry: Registry,
    /// Flips to `true` when the server shuts down; open watches end.
    pub shutdown: watch::Receiver<bool>,
    /// `host:port` clients use, for `/api`'s serverAddressByClientCIDRs.
    pub address: String,
    /// Request counters served at `/metrics`.
    pub metrics: Metrics,
    /// The OpenAPI documents, built on first use.
    pub openapi: openapi::OpenApiDocs,
    /// Who sends each request.
    pub authenticator: Arc<Authenticator>,
    /// What each user may do.
    pub authorizer: Arc<Authorizer>,
    /// Priority and fairness, or the in-flight limits.
    pub limiter: Limiter,
    /// The audit policy and log (`--audit-policy-file`), if any.
    pub auditor: Option<Arc<crate::audit::Auditor>>,
    /// The group versions other servers serve (APIServices with a Service).
    pub remote: Arc<crate::aggregator::RemoteApis>,
    /// The post-start hooks and plain checks of the health endpoints.
    pub checks: Arc<crate::post_start::Checks>,
}
