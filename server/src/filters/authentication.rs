//! The authentication filter (k8s.io/apiserver's WithAuthentication): sets
//! the request's user unless an in-process client already did, or answers
//! 401, audited as a failed authentication.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api_error::warning_header;
use crate::audit::Auditor;
use crate::authn::{Authenticator, x509};
use crate::registry::Registry;
use crate::user::UserInfo;

/// The filter's state.
#[derive(Clone)]
pub struct Authentication {
    /// The authenticators.
    pub authenticator: Arc<Authenticator>,
    /// Where a failed authentication is recorded.
    pub auditor: Option<Arc<Auditor>>,
    /// Bound tokens are checked against the registry's objects.
    pub registry: Registry,
}

/// The filter.
pub async fn authenticate(
    State(state): State<Arc<Authentication>>,
    mut request: Request,
    next: Next,
) -> Response {
    if request.extensions().get::<Arc<UserInfo>>().is_some() {
        return next.run(request).await;
    }
    let peer = request
        .extensions()
        .get::<Arc<x509::PeerCertificates>>()
        .cloned();
    let registry = &state.registry;
    let verdict = state
        .authenticator
        .authenticate(
            request.headers(),
            peer.as_deref(),
            registry.storage().as_ref(),
            registry,
        )
        .await;
    match verdict {
        Ok((user, notes)) => {
            request.extensions_mut().insert(user);
            state.authenticator.clear_credentials(request.headers_mut());
            if notes.warnings.is_empty() && notes.annotations.is_empty() {
                return next.run(request).await;
            }
            let warnings = notes.warnings.clone();
            request.extensions_mut().insert(Arc::new(notes));
            let mut answer = next.run(request).await;
            for value in warnings.iter().filter_map(|w| warning_header(w)) {
                answer.headers_mut().append(header::WARNING, value);
            }
            answer
        }
        Err(e) => {
            let mut answer = e.into_response();
            let id = crate::audit::audit_id(request.headers());
            if let Some(auditor) = &state.auditor {
                crate::audit::failed_authentication(auditor, &request, &answer, &id);
            }
            answer.headers_mut().insert(crate::audit::AUDIT_ID, id);
            crate::body::answer_unread(request, answer).await
        }
    }
}
