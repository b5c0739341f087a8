//! Priority and fairness, or the in-flight limits (k8s.io/apiserver's
//! WithPriorityAndFairness / WithMaxInFlightLimit).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::flowcontrol::Limiter;
use crate::registry::Registry;

/// The filter's state.
#[derive(Clone)]
pub struct Priority {
    /// The limiter configured.
    pub limiter: Limiter,
    /// How many objects a list may read, for its seats.
    pub registry: Registry,
}

/// The filter.
pub async fn limit(State(state): State<Arc<Priority>>, request: Request, next: Next) -> Response {
    let registry = &state.registry;
    let count = |group: &str, resource: &str| registry.object_count(group, resource);
    state.limiter.serve(request, next, &count).await
}
