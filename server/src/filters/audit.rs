//! The audit filter (k8s.io/apiserver's WithAudit): every answer gets its
//! `Audit-Id`; with a policy, the request's events are written.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::audit::Auditor;
use crate::registry::Registry;

/// The filter's state.
#[derive(Clone)]
pub struct Audit {
    /// The policy and log (`--audit-policy-file`), if any.
    pub auditor: Option<Arc<Auditor>>,
    /// The kinds served, to read request bodies and name kinds.
    pub registry: Registry,
}

/// The filter.
pub async fn audit(State(state): State<Arc<Audit>>, request: Request, next: Next) -> Response {
    crate::audit::serve(state.auditor.as_ref(), &state.registry, request, next).await
}
