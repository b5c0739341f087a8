//! The limits kube-apiserver applies when priority and fairness is off
//! (`--enable-priority-and-fairness=false`): at most
//! `--max-requests-inflight` reads and `--max-mutating-requests-inflight`
//! writes at once, no queueing; one more gets a 429 with `Retry-After: 1`,
//! unless it is long-running or its user is in `system:masters`.

use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use tokio::sync::Semaphore;

use crate::request_info::{RequestInfo, Verb};

/// The two limits (`None`: unlimited).
#[derive(Clone)]
pub struct MaxInFlight {
    read_only: Option<Arc<Semaphore>>,
    mutating: Option<Arc<Semaphore>>,
}

impl MaxInFlight {
    /// `read_only` reads and `mutating` writes at once; 0 leaves that kind
    /// unlimited.
    pub fn new(read_only: usize, mutating: usize) -> MaxInFlight {
        let limit = |n: usize| (n > 0).then(|| Arc::new(Semaphore::new(n)));
        MaxInFlight {
            read_only: limit(read_only),
            mutating: limit(mutating),
        }
    }

    /// Serves the request within the limits.
    pub async fn serve(&self, request: Request, next: Next) -> Response {
        let info = RequestInfo::of(&request);
        let watch = info.watch;
        let resource = info.resource();
        if watch || resource.as_ref().is_some_and(super::is_long_running) {
            return next.run(request).await;
        }
        let mutating = resource
            .as_ref()
            .is_some_and(|r| !matches!(r.verb, Verb::Get | Verb::List | Verb::Watch));
        let limit = if mutating {
            &self.mutating
        } else {
            &self.read_only
        };
        let Some(limit) = limit else {
            return next.run(request).await;
        };
        let permit = limit.clone().try_acquire_owned();
        if permit.is_err() && !crate::user::user_of(&request).in_group(crate::user::MASTERS) {
            return super::too_many_requests(1);
        }
        let response = next.run(request).await;
        drop(permit);
        response
    }
}
