//! Who sends a request: the user every later step (priority and fairness
//! today, authorization and audit later) decides on.
//!
//! A request carries its [`UserInfo`] as an extension. The in-process
//! clients (the built-in controllers) set theirs before the request enters
//! the router; a request from the network gets one here:
//!
//! - a bearer token from `--token-auth-file` names its user (plus the group
//!   `system:authenticated`), as kube-apiserver's static token authenticator;
//!   a token that file does not hold is refused with a 401;
//! - anything else is `system:anonymous` in `system:unauthenticated`;
//! - `Impersonate-*` headers then replace that user (no one is refused:
//!   kapi authorizes nothing yet).
//!
//! Without `--token-auth-file` tokens are not examined at all: kapi has no
//! other authenticator yet (client certificates and service account tokens
//! come with TLS), and every request is anonymous.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api_error::ApiError;

/// The group of every authenticated user.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The group of anonymous requests.
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The group whose members may do anything (and are exempt from priority and
/// fairness).
pub const MASTERS: &str = "system:masters";

/// An authenticated (or anonymous) user, as k8s.io/apiserver's user.Info.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name (`system:serviceaccount:<namespace>:<name>` for service
    /// accounts).
    pub name: String,
    /// A unique id, where the authenticator knows one.
    pub uid: String,
    /// The groups the user is in.
    pub groups: Vec<String>,
    /// Further attributes.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// A user of `groups`.
    pub fn new(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.to_owned(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            ..UserInfo::default()
        }
    }

    /// `system:anonymous`.
    pub fn anonymous() -> UserInfo {
        UserInfo::new("system:anonymous", &[UNAUTHENTICATED])
    }

    /// kube-apiserver's own loopback identity, which its in-process
    /// controllers use.
    pub fn apiserver() -> UserInfo {
        UserInfo::new("system:apiserver", &[MASTERS, AUTHENTICATED])
    }

    /// The identity of the controllers kube-controller-manager runs upstream
    /// (without `--use-service-account-credentials`).
    pub fn controller_manager() -> UserInfo {
        UserInfo::new("system:kube-controller-manager", &[AUTHENTICATED])
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// The namespace and name of a service account user
    /// (`system:serviceaccount:<namespace>:<name>`).
    pub fn service_account(&self) -> Option<(&str, &str)> {
        let rest = self.name.strip_prefix("system:serviceaccount:")?;
        let (namespace, name) = rest.split_once(':')?;
        (!namespace.is_empty() && !name.is_empty() && !name.contains(':'))
            .then_some((namespace, name))
    }
}

/// Why the token file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// The file could not be read.
    #[error("token file {path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        error: std::io::Error,
    },
    /// A record is malformed.
    #[error("token file {path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, with the record's number.
        message: String,
    },
}

/// The authenticators configured.
#[derive(Debug, Default)]
pub struct Authenticator {
    /// `--token-auth-file`: token to user (groups include
    /// `system:authenticated`). `None` when no file was given.
    tokens: Option<HashMap<String, Arc<UserInfo>>>,
}

impl Authenticator {
    /// No authenticator: every request from the network is anonymous.
    pub fn anonymous_only() -> Authenticator {
        Authenticator::default()
    }

    /// The static tokens of `path`: CSV records `token,user,uid[,"group1,group2"]`
    /// (kube-apiserver's `--token-auth-file` format).
    pub fn with_token_file(path: &Path) -> Result<Authenticator, TokenFileError> {
        let shown = path.display().to_string();
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::Headers)
            .from_path(path)
            .map_err(|e| TokenFileError::Io {
                path: shown.clone(),
                error: std::io::Error::other(e.to_string()),
            })?;
        let mut tokens = HashMap::new();
        for (number, record) in reader.records().enumerate() {
            let record = record.map_err(|e| TokenFileError::Invalid {
                path: shown.clone(),
                message: e.to_string(),
            })?;
            let fields: Vec<&str> = record.iter().map(str::trim_start).collect();
            if fields.len() < 3 {
                return Err(TokenFileError::Invalid {
                    path: shown.clone(),
                    message: format!(
                        "record {} must have at least 3 columns (token, user name, user uid), found {}",
                        number + 1,
                        fields.len()
                    ),
                });
            }
            if fields[0].is_empty() {
                tracing::warn!(path = %shown, record = number + 1, "empty token in token file");
                continue;
            }
            let mut user = UserInfo {
                name: fields[1].to_owned(),
                uid: fields[2].to_owned(),
                ..UserInfo::default()
            };
            if let Some(groups) = fields.get(3) {
                user.groups.extend(
                    groups
                        .split(',')
                        .map(str::trim)
                        .filter(|g| !g.is_empty())
                        .map(str::to_owned),
                );
            }
            if !user.in_group(AUTHENTICATED) {
                user.groups.push(AUTHENTICATED.to_owned());
            }
            if tokens
                .insert(fields[0].to_owned(), Arc::new(user))
                .is_some()
            {
                tracing::warn!(path = %shown, record = number + 1, "duplicate token in token file");
            }
        }
        Ok(Authenticator {
            tokens: Some(tokens),
        })
    }

    /// The user of a request's headers; `Err` for credentials that are
    /// refused.
    pub fn authenticate(&self, headers: &axum::http::HeaderMap) -> Result<Arc<UserInfo>, ApiError> {
        let Some(tokens) = &self.tokens else {
            return Ok(anonymous());
        };
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return Ok(anonymous());
        };
        let token = value
            .to_str()
            .ok()
            .and_then(bearer)
            .ok_or_else(ApiError::unauthorized)?;
        tokens
            .get(token)
            .cloned()
            .ok_or_else(ApiError::unauthorized)
    }
}

/// The token of `Bearer <token>` (the scheme's case does not matter).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn anonymous() -> Arc<UserInfo> {
    static ANONYMOUS: std::sync::OnceLock<Arc<UserInfo>> = std::sync::OnceLock::new();
    ANONYMOUS
        .get_or_init(|| Arc::new(UserInfo::anonymous()))
        .clone()
}

/// The user of a request that went through [`authenticate`] (anonymous if it
/// did not).
pub fn user_of(request: &Request) -> Arc<UserInfo> {
    request
        .extensions()
        .get::<Arc<UserInfo>>()
        .cloned()
        .unwrap_or_else(anonymous)
}

/// The filter: sets the request's user unless an in-process client already
/// did, or answers 401; then takes on the user the `Impersonate-*` headers
/// name.
pub async fn authenticate(
    authenticator: &Authenticator,
    mut request: Request,
    next: Next,
) -> Response {
    if request.extensions().get::<Arc<UserInfo>>().is_none() {
        match authenticator.authenticate(request.headers()) {
            Ok(user) => {
                request.extensions_mut().insert(user);
            }
            Err(e) => return e.into_response(),
        }
    }
    match impersonated(request.headers()) {
        Ok(None) => {}
        Ok(Some(user)) => {
            request.extensions_mut().insert(Arc::new(user));
        }
        Err(refs) => {
            // Upstream's words, a plain-text 500.
            let message = format!(
                "Internal Server Error: {:?}: requested [{refs}] without impersonating a user\n",
                request.uri().path()
            );
            return crate::health::text(axum::http::StatusCode::INTERNAL_SERVER_ERROR, message);
        }
    }
    next.run(request).await
}

const IMPERSONATE_USER: &str = "impersonate-user";
const IMPERSONATE_GROUP: &str = "impersonate-group";
const IMPERSONATE_UID: &str = "impersonate-uid";
const IMPERSONATE_EXTRA: &str = "impersonate-extra-";

/// The user `Impersonate-User`, `-Group`, `-Uid` and `-Extra-*` name, with
/// the groups kube-apiserver adds (a service account's, and
/// `system:authenticated` or `system:unauthenticated`). `Err` lists (in Go's
/// form) what was asked without a user.
///
/// kapi authorizes nothing yet, so anyone may impersonate anyone, as
/// kube-apiserver with `--authorization-mode=AlwaysAllow`; the `impersonate`
/// verb's check comes with RBAC.
fn impersonated(headers: &axum::http::HeaderMap) -> Result<Option<UserInfo>, String> {
    let text = |v: &axum::http::HeaderValue| v.to_str().unwrap_or_default().to_owned();
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
    use axum::http::{HeaderMap, HeaderValue};

    fn file(text: &str) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        file
    }

    fn with_token(token: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
        );
        headers
    }

    #[test]
    fn token_file_names_users_and_groups() {
        let f = file("t1,alice,u1,\"dev,ops\"\nt2, bob, u2\n");
        let auth = Authenticator::with_token_file(f.path()).unwrap();
        let alice = auth.authenticate(&with_token("t1")).unwrap();
        assert_eq!(alice.name, "alice");
        assert_eq!(alice.uid, "u1");
        assert_eq!(alice.groups, ["dev", "ops", AUTHENTICATED]);
        let bob = auth.authenticate(&with_token("t2")).unwrap();
        assert_eq!((bob.name.as_str(), bob.groups.len()), ("bob", 1));
        let refused = auth.authenticate(&with_token("nope")).unwrap_err();
        assert_eq!(refused.code(), 401);
        let nobody = auth.authenticate(&HeaderMap::new()).unwrap();
        assert_eq!(nobody.name, "system:anonymous");
    }

    #[test]
    fn short_records_are_refused() {
        let f = file("t1,alice\n");
        let err = Authenticator::with_token_file(f.path()).unwrap_err();
        assert!(err.to_string().contains("at least 3 columns"), "{err}");
    }

    #[test]
    fn without_a_file_tokens_are_not_examined() {
        let auth = Authenticator::anonymous_only();
        let user = auth.authenticate(&with_token("anything")).unwrap();
        assert_eq!(*user, UserInfo::anonymous());
    }

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

    #[test]
    fn service_account_names() {
        let sa = UserInfo::new("system:serviceaccount:kube-system:default", &[]);
        assert_eq!(sa.service_account(), Some(("kube-system", "default")));
        assert_eq!(UserInfo::anonymous().service_account(), None);
    }
}
