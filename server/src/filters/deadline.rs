//! The request deadline (kube-apiserver's WithRequestDeadline): a request
//! whose `timeout` does not parse gets a 400 whatever it asks for, unless it
//! is long-running (a watch), which the parameter does not bound. The bound
//! itself is applied by the handler (`RequestInfo::deadline`).

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::request_info::RequestInfo;

/// The filter.
pub async fn check_timeout(request: Request, next: Next) -> Response {
    let info = RequestInfo::of(&request);
    let watch = info.watch || request.uri().path().contains("/watch/");
    if !watch && let Err(e) = &info.timeout {
        return e.clone().into_response();
    }
    next.run(request).await
}
