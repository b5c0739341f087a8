//! The first filter: the request parsed once (k8s.io/apiserver's
//! WithRequestInfo).

use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

use crate::request_info::RequestInfo;

/// Puts the request's [`RequestInfo`] in its extensions.
pub async fn parse(mut request: Request, next: Next) -> Response {
    let uri = request.uri();
    let info = RequestInfo::parse(request.method(), uri.path(), uri.query());
    request.extensions_mut().insert(Arc::new(info));
    next.run(request).await
}
