//! The authorization filter: every request from the network, once its user
//! is known, is allowed by an authorizer or answered 403 Forbidden with
//! kube-apiserver's message.

use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use axum::extract::State;

use crate::api_error::ApiError;
use crate::authz::{Attributes, Authorizer, Decision, Target};
use crate::registry::Registry;
use crate::request_info::RequestInfo;
use crate::selectors::field::FieldSelector;

/// The state of the authorization and impersonation filters.
#[derive(Clone)]
pub struct Authorization {
    /// The authorizers.
    pub authorizer: Arc<Authorizer>,
    /// The objects they read (roles, bindings, a node's pods).
    pub registry: Registry,
}

/// The filter.
pub async fn authorize(
    State(state): State<Arc<Authorization>>,
    request: Request,
    next: Next,
) -> Response {
    let user = crate::user::user_of(&request);
    let info = RequestInfo::of(&request);
    let path = request.uri().path().to_owned();
    let resource = info.resource();
    // A list or watch's field selector: the authorizers may look at it, and
    // one pinning `metadata.name` names the object (upstream's RequestInfo).
    let fields = info.list_fields();
    let (verb, target) = match &resource {
        Some(r) => (
            r.verb.as_str(),
            Target::Resource {
                namespace: r.namespace.unwrap_or_default(),
                group: r.group,
                resource: r.resource,
                subresource: r.subresource.unwrap_or_default(),
                name: r
                    .name
                    .or_else(|| named_by(fields.as_ref()?))
                    .unwrap_or_default(),
                fields: fields.as_ref(),
            },
        ),
        None => (info.method.as_ref(), Target::Path(&path)),
    };
    let attributes = Attributes {
        user: &user,
        verb,
        target,
    };
    // An audited request's event records the decision with its reason.
    let audited = crate::audit::audited(&request);
    if !audited && state.authorizer.allows(&attributes, &state.registry).await {
        return next.run(request).await;
    }
    match state
        .authorizer
        .authorize(&attributes, &state.registry)
        .await
    {
        Decision::Allow(reason) => {
            crate::audit::record_decision(&request, true, &reason);
            next.run(request).await
        }
        Decision::Deny(reason) | Decision::NoOpinion(reason) => {
            crate::audit::record_decision(&request, false, &reason);
            let answer = forbidden(&attributes, &reason).into_response();
            crate::body::answer_unread(request, answer).await
        }
    }
}

/// The name a selector pins `metadata.name` to, when it is a name a path
/// could hold.
fn named_by(fields: &FieldSelector) -> Option<&str> {
    let name = fields.exact_value("metadata.name")?;
    let valid = !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '%']);
    valid.then_some(name)
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
