//! The authorization filter: every request from the network, once its user
//! is known, is allowed by an authorizer or answered 403 Forbidden with
//! kube-apiserver's message.

use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{Attributes, Decision, Target};
use crate::api_error::ApiError;
use crate::request_info;
use crate::state::App;

/// The filter.
pub async fn authorize(app: Arc<App>, request: Request, next: Next) -> Response {
    let user = crate::authn::user_of(&request);
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let watch = request
        .uri()
        .query()
        .is_some_and(crate::flowcontrol::is_watch);
    let resource = request_info::parse_ref(&method, &path, watch);
    let lower = crate::flowcontrol::lower_case(&method);
    let (verb, target) = match &resource {
        Some(r) => (
            r.verb.as_str(),
            Target::Resource {
                namespace: r.namespace.unwrap_or_default(),
                group: r.group,
                resource: r.resource,
                subresource: r.subresource.unwrap_or_default(),
                name: r.name.unwrap_or_default(),
            },
        ),
        None => (lower.as_ref(), Target::Path(&path)),
    };
    let attributes = Attributes {
        user: &user,
        verb,
        target,
    };
    if app.authorizer.allows(&attributes, &app.registry).await {
        return next.run(request).await;
    }
    match app.authorizer.authorize(&attributes, &app.registry).await {
        Decision::Allow(_) => next.run(request).await,
        Decision::Deny(reason) | Decision::NoOpinion(reason) => {
            forbidden(&attributes, &reason).into_response()
        }
    }
}

/// kube-apiserver's 403 for `request`: what the user cannot do, and the
/// authorizers' reasons.
pub fn forbidden(request: &Attributes<'_>, reason: &str) -> ApiError {
    let user = &request.user.name;
    let mut why = match &request.target {
        Target::Path(path) => format!("User {user:?} cannot {} path {path:?}", request.verb),
        Target::Resource {
            namespace,
            group,
            resource,
            subresource,
            ..
        } => {
            let what = if subresource.is_empty() {
                (*resource).to_owned()
            } else {
                format!("{resource}/{subresource}")
            };
            let scope = if namespace.is_empty() {
                "at the cluster scope".to_owned()
            } else {
                format!("in the namespace {namespace:?}")
            };
            format!(
                "User {user:?} cannot {} resource {what:?} in API group {group:?} {scope}",
                request.verb
            )
        }
    };
    if !reason.is_empty() {
        why.push_str(": ");
        why.push_str(reason);
    }
    match &request.target {
        Target::Path(_) => ApiError::unauthorized_action("", "", "", &why),
        Target::Resource {
            group,
            resource,
            name,
            ..
        } => ApiError::unauthorized_action(group, resource, name, &why),
    }
}
