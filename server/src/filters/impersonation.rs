//! `Impersonate-User`, `-Group`, `-Uid` and `-Extra-*`: the user a request
//! acts as, read from its headers and allowed as kube-apiserver's
//! impersonation filter does: the authenticated user needs the `impersonate`
//! verb on each user (or service account), group, uid and extra value it
//! asks for.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use axum::extract::State;

use super::authorization::Authorization;
use crate::authz::{Attributes, Decision, Target};
use crate::user::{AUTHENTICATED, UNAUTHENTICATED, UserInfo};

/// The filter: replaces the request's user with the one its
/// `Impersonate-*` headers name, once each part is allowed; 403 otherwise.
pub async fn impersonate(
    State(state): State<Arc<Authorization>>,
    mut request: Request,
    next: Next,
) -> Response {
    let asked = match impersonated(request.headers()) {
        Ok(None) => return next.run(request).await,
        Ok(Some(user)) => user,
        Err(refs) => {
            // Upstream's words, a plain-text 500.
            let message = format!(
                "Internal Server Error: {:?}: requested [{refs}] without impersonating a user\n",
                request.uri().path()
            );
            return crate::api_error::plain_text(
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                message,
            );
        }
    };
    let requester = crate::user::user_of(&request);
    for (group, resource, subresource, namespace, name) in asked_parts(&request, &asked) {
        let attributes = Attributes {
            user: &requester,
            verb: "impersonate",
            target: Target::Resource {
                namespace: &namespace,
                group,
                resource,
                subresource: &subresource,
                name: &name,
                fields: None,
            },
        };
        match state
            .authorizer
            .authorize(&attributes, &state.registry)
            .await
        {
            Decision::Allow(_) => {}
            Decision::Deny(reason) | Decision::NoOpinion(reason) => {
                return super::authorization::forbidden(&attributes, &reason).into_response();
            }
        }
    }
    crate::audit::record_impersonation(&request, &asked);
    request.extensions_mut().insert(Arc::new(asked));
    // Nothing after this filter (a server requests are passed on to)
    // sees what was asked for.
    let headers = request.headers_mut();
    let asking: Vec<axum::http::HeaderName> = headers
        .keys()
        .filter(|k| {
            let k = k.as_str();
            matches!(
                k,
                "impersonate-user" | "impersonate-group" | "impersonate-uid"
            ) || k.starts_with("impersonate-extra-")
        })
        .cloned()
        .collect();
    for name in asking {
        headers.remove(name);
    }
    next.run(request).await
}

/// What impersonating `asked` takes, as (group, resource, subresource,
/// namespace, name), in upstream's order: the user (or service account),
/// each group, each extra value, the uid.
fn asked_parts(
    request: &Request,
    asked: &UserInfo,
) -> Vec<(&'static str, &'static str, String, String, String)> {
    let headers = request.headers();
    let mut parts = Vec::new();
    match asked.service_account() {
        Some((namespace, name)) => parts.push((
            "",
            "serviceaccounts",
            String::new(),
            namespace.to_owned(),
            name.to_owned(),
        )),
        None => parts.push((
            "",
            "users",
            String::new(),
            String::new(),
            asked.name.clone(),
        )),
    }
    for group in headers.get_all(IMPERSONATE_GROUP) {
        let group = group.to_str().unwrap_or_default().to_owned();
        parts.push(("", "groups", String::new(), String::new(), group));
    }
    for (key, values) in &asked.extra {
        for value in values {
            parts.push((
                "authentication.k8s.io",
                "userextras",
                key.clone(),
                String::new(),
                value.clone(),
            ));
        }
    }
    if !asked.uid.is_empty() {
        parts.push((
            "authentication.k8s.io",
            "uids",
            String::new(),
            String::new(),
            asked.uid.clone(),
        ));
    }
    parts
}

const IMPERSONATE_USER: &str = "impersonate-user";
const IMPERSONATE_GROUP: &str = "impersonate-group";
const IMPERSONATE_UID: &str = "impersonate-uid";
const IMPERSONATE_EXTRA: &str = "impersonate-extra-";

/// The user the `Impersonate-*` headers name, with the groups kube-apiserver
/// adds (a service account's, and `system:authenticated` or
/// `system:unauthenticated`). `Err` lists (in Go's form) what was asked
/// without a user.
pub fn impersonated(headers: &HeaderMap) -> Result<Option<UserInfo>, String> {
    let text = |v: &HeaderValue| v.to_str().unwrap_or_default().to_owned();
    let name = headers.get(IMPERSONATE_USER).map(text);
    let asked_groups: Vec<String> = headers
        .get_all(IMPERSONATE_GROUP)
        .iter()
        .map(text)
        .collect();
    let uid = headers.get(IMPERSONATE_UID).map(text);
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (header_name, value) in headers {
        if let Some(key) = header_name.as_str().strip_prefix(IMPERSONATE_EXTRA) {
            let key = form_urlencoded::parse(format!("k={key}").as_bytes())
                .next()
                .map_or_else(|| key.to_owned(), |(_, v)| v.into_owned());
            extra
                .entry(key.to_lowercase())
                .or_default()
                .push(text(value));
        }
    }
    let Some(name) = name else {
        if asked_groups.is_empty() && uid.is_none() && extra.is_empty() {
            return Ok(None);
        }
        let mut refs: Vec<String> = asked_groups
            .iter()
            .map(|g| format!("{{Group  {g}    }}"))
            .collect();
        for (key, values) in &extra {
            refs.extend(
                values
                    .iter()
                    .map(|v| format!("{{UserExtra  {v}    {key}}}")),
            );
        }
        refs.extend(uid.iter().map(|u| format!("{{UID  {u}    }}")));
        return Err(refs.join(" "));
    };
    let mut user = UserInfo {
        uid: uid.unwrap_or_default(),
        extra,
        ..UserInfo::default()
    };
    user.name = name;
    if let Some((namespace, _)) = user.service_account() {
        let namespace = namespace.to_owned();
        user.groups.push("system:serviceaccounts".to_owned());
        user.groups
            .push(format!("system:serviceaccounts:{namespace}"));
    }
    user.groups.extend(asked_groups);
    if user.name == "system:anonymous" {
        if !user.in_group(UNAUTHENTICATED) {
            user.groups.push(UNAUTHENTICATED.to_owned());
        }
    } else if !user.in_group(AUTHENTICATED) && !user.in_group(UNAUTHENTICATED) {
        user.groups.push(AUTHENTICATED.to_owned());
    }
    Ok(Some(user))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impersonation_as_upstream() {
        let mut headers = HeaderMap::new();
        headers.insert(
            IMPERSONATE_USER,
            HeaderValue::from_static("system:serviceaccount:ns1:sa1"),
        );
        headers.insert(IMPERSONATE_UID, HeaderValue::from_static("123"));
        headers.insert("impersonate-extra-foo-bar", HeaderValue::from_static("x"));
        let user = impersonated(&headers).unwrap().unwrap();
        assert_eq!(user.name, "system:serviceaccount:ns1:sa1");
        assert_eq!(user.uid, "123");
        assert_eq!(
            user.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ns1",
                AUTHENTICATED
            ]
        );
        assert_eq!(user.extra["foo-bar"], ["x"]);

        let mut headers = HeaderMap::new();
        headers.append(IMPERSONATE_USER, HeaderValue::from_static("alice"));
        headers.append(IMPERSONATE_GROUP, HeaderValue::from_static(UNAUTHENTICATED));
        let user = impersonated(&headers).unwrap().unwrap();
        assert_eq!(user.groups, [UNAUTHENTICATED]);

        let mut headers = HeaderMap::new();
        headers.append(IMPERSONATE_GROUP, HeaderValue::from_static("g1"));
        assert_eq!(impersonated(&headers).unwrap_err(), "{Group  g1    }");
        assert_eq!(impersonated(&HeaderMap::new()), Ok(None));
    }
}
