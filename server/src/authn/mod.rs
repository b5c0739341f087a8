//! Who sends a request: the user every later step (priority and fairness
//! today, authorization and audit later) decides on.
//!
//! A request carries its [`UserInfo`] as an extension. The in-process
//! clients (the built-in controllers) set theirs before the request enters
//! the router; a request from the network gets one here, in kube-apiserver's
//! order:
//!
//! - a client certificate that chains to a client CA names its user
//!   ([`x509`]);
//! - else a bearer token names one: `--token-auth-file`'s ([`token_file`]),
//!   a service account token kapi issued ([`service_account`]), a bootstrap
//!   token with `--enable-bootstrap-token-auth` ([`bootstrap`]);
//! - a credential no authenticator accepts (a token no one knows, a
//!   certificate of another CA, with nothing better beside it) is refused with
//!   a 401, never taken as anonymous;
//! - a request without credentials is `system:anonymous` in
//!   `system:unauthenticated`, unless `--anonymous-auth=false` refuses it;
//! - every authenticated user is in `system:authenticated`;
//! - `Impersonate-*` headers then replace that user, when the authorizer
//!   allows it (`crate::impersonation`).

pub mod bootstrap;
mod cache;
pub mod request_header;
pub mod service_account;
pub mod token_file;
pub mod webhook;
pub mod x509;

use std::sync::Arc;

use axum::http::header;

use kapi_storage::Storage;

use crate::api_error::ApiError;
use crate::loopback::Loopback;
use crate::user::{UserInfo, anonymous};

/// The authenticators configured.
#[derive(Debug)]
pub struct Authenticator {
    /// Front proxies (`--requestheader-*`).
    request_header: Option<request_header::RequestHeader>,
    /// Client certificates (none without TLS, as in-process tests run).
    certificates: Option<x509::ClientCertificates>,
    /// `--token-auth-file`.
    tokens: Option<token_file::TokenFile>,
    /// The service account tokens kapi issues.
    service_accounts: Option<service_account::ServiceAccountTokens>,
    /// `--enable-bootstrap-token-auth`.
    bootstrap_tokens: bool,
    /// `--anonymous-auth`.
    anonymous: bool,
    /// The API server's audiences: what a token is for unless it says
    /// otherwise (the service account issuer's names by default).
    api_audiences: Vec<String>,
    /// Recent successful token authentications.
    cache: cache::TokenCache,
    /// Another cluster reviewing the tokens this server does not know
    /// (`--authentication-kubeconfig`).
    token_review: Option<webhook::TokenReview>,
}

/// The front-proxy headers everyone knows, cleared from every
/// authenticated request (k8s.io/apiserver's standard request-header names).
const STANDARD_PROXY_HEADERS: [&str; 3] = ["x-remote-user", "x-remote-uid", "x-remote-group"];
const STANDARD_EXTRA_PREFIX: &str = "x-remote-extra-";

/// Removes the headers whose names start with one of `prefixes` (compared
/// without case); nothing is allocated when there is none.
fn remove_prefixed(headers: &mut axum::http::HeaderMap, prefixes: &[&str]) {
    let starts = |name: &str| {
        prefixes.iter().any(|p| {
            name.len() >= p.len() && name.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes())
        })
    };
    let found: Vec<axum::http::HeaderName> = headers
        .keys()
        .filter(|k| starts(k.as_str()))
        .cloned()
        .collect();
    for name in found {
        headers.remove(name);
    }
}

impl Authenticator {
    /// Removes the credentials of a request once it is authenticated, as
    /// k8s.io/apiserver's authentication filter does: `Authorization`, the
    /// standard front-proxy headers (`X-Remote-User`, `-Uid`, `-Group`,
    /// `X-Remote-Extra-*`) and the ones `--requestheader-*` names, so that
    /// none reaches a handler or a server requests are passed on to.
    pub fn clear_credentials(&self, headers: &mut axum::http::HeaderMap) {
        headers.remove(axum::http::header::AUTHORIZATION);
        for name in STANDARD_PROXY_HEADERS {
            headers.remove(name);
        }
        let Some(proxies) = &self.request_header else {
            remove_prefixed(headers, &[STANDARD_EXTRA_PREFIX]);
            return;
        };
        for name in proxies
            .username_headers
            .iter()
            .chain(&proxies.group_headers)
        {
            headers.remove(name.as_str());
        }
        remove_prefixed(headers, &[STANDARD_EXTRA_PREFIX]);
        for prefix in &proxies.extra_headers_prefix {
            remove_prefixed(headers, &[prefix.as_str()]);
        }
    }
}

impl Default for Authenticator {
    /// No credentials are known and requests without any are anonymous.
    fn default() -> Authenticator {
        Authenticator {
            request_header: None,
            certificates: None,
            tokens: None,
            service_accounts: None,
            bootstrap_tokens: false,
            anonymous: true,
            api_audiences: vec![service_account::issuer::DEFAULT_ISSUER.to_owned()],
            cache: cache::TokenCache::default(),
            token_review: None,
        }
    }
}

impl Authenticator {
    /// No authenticator: every request from the network is anonymous.
    pub fn anonymous_only() -> Authenticator {
        Authenticator::default()
    }

    /// Authenticates the users front proxies name too.
    pub fn with_request_header(mut self, proxies: request_header::RequestHeader) -> Authenticator {
        self.request_header = Some(proxies);
        self
    }

    /// Authenticates client certificates of these CAs too.
    pub fn with_client_certificates(mut self, trusted: x509::ClientCertificates) -> Authenticator {
        self.certificates = Some(trusted);
        self
    }

    /// Authenticates the tokens of a `--token-auth-file` too.
    pub fn with_token_file(mut self, tokens: token_file::TokenFile) -> Authenticator {
        self.tokens = Some(tokens);
        self
    }

    /// Authenticates the service account tokens of `issuer` too (and takes
    /// its API audiences).
    pub fn with_service_accounts(mut self, issuer: Arc<service_account::Issuer>) -> Authenticator {
        self.api_audiences = issuer.api_audiences().to_vec();
        self.service_accounts = Some(service_account::ServiceAccountTokens::new(issuer));
        self
    }

    /// Asks `review` about the tokens no other authenticator knows.
    pub fn with_token_review(mut self, review: webhook::TokenReview) -> Authenticator {
        self.token_review = Some(review);
        self
    }

    /// The API server's audiences.
    pub fn api_audiences(&self) -> &[String] {
        &self.api_audiences
    }

    /// The service account issuer whose tokens are verified (without one,
    /// the default issuer, whose key is the store's).
    pub fn issuer(&self) -> Arc<service_account::Issuer> {
        static DEFAULT: std::sync::OnceLock<Arc<service_account::Issuer>> =
            std::sync::OnceLock::new();
        match &self.service_accounts {
            Some(accounts) => accounts.issuer().clone(),
            None => DEFAULT.get_or_init(Arc::default).clone(),
        }
    }

    /// `--enable-bootstrap-token-auth`: authenticates bootstrap tokens too.
    pub fn with_bootstrap_tokens(mut self, enabled: bool) -> Authenticator {
        self.bootstrap_tokens = enabled;
        self
    }

    /// `--anonymous-auth`: whether a request without credentials is served as
    /// `system:anonymous` (else it gets a 401).
    pub fn with_anonymous(mut self, allowed: bool) -> Authenticator {
        self.anonymous = allowed;
        self
    }

    /// The client CAs' verifier, for the TLS handshake.
    pub fn client_certificates(&self) -> Option<&x509::ClientCertificates> {
        self.certificates.as_ref()
    }

    /// The user of a request with these headers from a connection that
    /// presented `peer` (if any), with what authenticating it adds to the
    /// request; `Err` for credentials that are refused. Tokens bound to
    /// objects are checked against `objects`.
    pub async fn authenticate(
        &self,
        headers: &axum::http::HeaderMap,
        peer: Option<&x509::PeerCertificates>,
        storage: &dyn Storage,
        objects: &dyn Loopback,
    ) -> Result<(Arc<UserInfo>, Notes), ApiError> {
        // As upstream's union: the first authenticator that knows the
        // request wins; a refusal counts only when no one accepts it.
        let mut refused = false;
        // A front proxy first, as upstream's union has it.
        if let (Some(proxies), Some(peer)) = (&self.request_header, peer) {
            match proxies.user(headers, peer) {
                Ok(Some(mut user)) => {
                    crate::user::add_authenticated(&mut user);
                    return Ok((Arc::new(user), Notes::default()));
                }
                Ok(None) => {}
                Err(x509::Refused(why)) => {
                    tracing::debug!(%why, "front proxy refused");
                    refused = true;
                }
            }
        }
        if let (Some(trusted), Some(peer)) = (&self.certificates, peer) {
            match peer.user(trusted) {
                Ok(Some(user)) => return Ok((user, Notes::default())),
                Ok(None) => {}
                Err(x509::Refused(why)) => {
                    tracing::debug!(%why, "client certificate refused");
                    refused = true;
                }
            }
        }
        if let Some(token) = bearer(headers) {
            match self
                .token_user(token, &self.api_audiences, storage, objects)
                .await
            {
                TokenVerdict::User(user, _, notes) => return Ok((user, notes)),
                TokenVerdict::Refused(why) => {
                    tracing::debug!(%why, "bearer token refused");
                    refused = true;
                }
            }
        }
        if refused || !self.anonymous {
            return Err(ApiError::unauthorized());
        }
        Ok((anonymous(), Notes::default()))
    }

    /// The token authenticators in upstream's order (the token file, service
    /// account tokens, bootstrap tokens), for `audiences`; a success is
    /// remembered for ten seconds, as kube-apiserver's token cache does.
    async fn token_user(
        &self,
        token: &str,
        audiences: &[String],
        storage: &dyn Storage,
        objects: &dyn Loopback,
    ) -> TokenVerdict {
        let key = self.cache.key(token, audiences);
        if let Some(known) = self.cache.get(&key) {
            return known;
        }
        let verdict = self
            .token_user_uncached(token, audiences, storage, objects)
            .await;
        if matches!(verdict, TokenVerdict::User(..)) {
            self.cache.insert(key, verdict.clone());
        }
        verdict
    }

    async fn token_user_uncached(
        &self,
        token: &str,
        audiences: &[String],
        storage: &dyn Storage,
        objects: &dyn Loopback,
    ) -> TokenVerdict {
        // The token file and bootstrap tokens know no audience: good for the
        // API server's, as upstream's audience-agnostic authenticators.
        let api: Vec<String> = audiences
            .iter()
            .filter(|a| self.api_audiences.contains(a))
            .cloned()
            .collect();
        if !api.is_empty()
            && let Some(user) = self.tokens.as_ref().and_then(|t| t.user(token))
        {
            return TokenVerdict::User(user, api, Notes::default());
        }
        if let Some(accounts) = &self.service_accounts {
            match accounts
                .authenticate(token, audiences, storage, objects)
                .await
            {
                service_account::Verdict::User(user, granted, notes) => {
                    return TokenVerdict::User(Arc::new(user), granted, notes);
                }
                // With a cluster to ask, a refusal here is not the last word
                // (upstream's union goes on to the next authenticator).
                service_account::Verdict::Refused(why) if self.token_review.is_none() => {
                    return refused(&why);
                }
                service_account::Verdict::Refused(_) | service_account::Verdict::NotOurs => {}
            }
        }
        if self.bootstrap_tokens && !api.is_empty() {
            match bootstrap::authenticate(token, objects).await {
                bootstrap::Verdict::User(user) => {
                    return TokenVerdict::User(Arc::new(user), api, Notes::default());
                }
                bootstrap::Verdict::Refused(why) if self.token_review.is_none() => {
                    return refused(&why);
                }
                bootstrap::Verdict::Refused(_) | bootstrap::Verdict::NotOurs => {}
            }
        }
        if let Some(review) = &self.token_review {
            return match review.review(token).await {
                webhook::Reviewed::User(user) => {
                    TokenVerdict::User(Arc::new(user), audiences.to_vec(), Notes::default())
                }
                webhook::Reviewed::Refused(why) => refused(&why),
            };
        }
        TokenVerdict::Refused(INVALID_BEARER_TOKEN.to_owned())
    }
}

/// A token one authenticator refused: upstream's union of token
/// authenticators reports the refusal after its own words (as the reference
/// answers TokenReviews).
fn refused(why: &str) -> TokenVerdict {
    TokenVerdict::Refused(format!("[{INVALID_BEARER_TOKEN}, {why}]"))
}

/// What a TokenReview learns of a token.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenVerdict {
    /// The token names `user`, for these of the requested audiences, with
    /// notes for the request.
    User(Arc<UserInfo>, Vec<String>, Notes),
    /// No authenticator accepts it, for this reason.
    Refused(String),
}

impl Authenticator {
    /// A TokenReview's question: whose `token` is, for `audiences` (the API
    /// server's own when empty).
    pub async fn review_token(
        &self,
        token: &str,
        audiences: &[String],
        storage: &dyn Storage,
        objects: &dyn Loopback,
    ) -> TokenVerdict {
        let asked = if audiences.is_empty() {
            &self.api_audiences[..]
        } else {
            audiences
        };
        self.token_user(token, asked, storage, objects).await
    }
}

/// What authenticating a request adds to it: warnings for the client and
/// annotations for its audit events (a legacy token's use, say).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Notes {
    /// `Warning` headers' texts.
    pub warnings: Vec<String>,
    /// Audit annotations.
    pub annotations: Vec<(&'static str, String)>,
}

impl Notes {
    /// Adds a warning.
    pub fn warn(&mut self, text: &str) {
        self.warnings.push(text.to_owned());
    }

    /// Adds an audit annotation.
    pub fn annotate(&mut self, key: &'static str, value: String) {
        self.annotations.push((key, value));
    }
}

/// Upstream's words for a bearer token no authenticator accepts.
const INVALID_BEARER_TOKEN: &str = "invalid bearer token";

/// The token of an `Authorization: Bearer <token>` header, read as upstream's
/// bearer token authenticator reads it: the scheme in any case, the token the
/// second space-separated word; anything else is no token at all.
fn bearer(headers: &axum::http::HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let mut parts = value.splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api_error::ApiResult;
    use crate::body::Object;
    use crate::loopback::{Change, Resource};
    use axum::http::{HeaderMap, HeaderValue};
    use kapi_storage::embedded::EmbeddedStore;

    /// A server without objects.
    struct NoObjects;

    #[async_trait::async_trait]
    impl Loopback for NoObjects {
        fn serves(&self, _: Resource<'_>) -> bool {
            false
        }
        async fn read_object(
            &self,
            _: Resource<'_>,
            _: Option<&str>,
            _: &str,
        ) -> ApiResult<Option<Object>> {
            Ok(None)
        }
        async fn read_all_objects(
            &self,
            _: Resource<'_>,
            _: Option<&str>,
        ) -> ApiResult<Vec<Object>> {
            Ok(Vec::new())
        }
        async fn edit_object(
            &self,
            _: Resource<'_>,
            _: Option<&str>,
            _: &str,
            _: crate::loopback::ObjectChange<'_>,
        ) -> ApiResult<()> {
            Ok(())
        }
        async fn edit_object_status(
            &self,
            _: Resource<'_>,
            _: Option<&str>,
            _: &str,
            _: crate::loopback::ObjectChange<'_>,
        ) -> ApiResult<()> {
            Ok(())
        }
        async fn edit_status(
            &self,
            _: Resource<'_>,
            _: Option<&str>,
            _: &str,
            _: Change<'_>,
        ) -> ApiResult<()> {
            Ok(())
        }
        async fn edit(
            &self,
            _: Resource<'_>,
            _: Option<&str>,
            _: &str,
            _: Change<'_>,
        ) -> ApiResult<()> {
            Ok(())
        }
    }

    fn with_authorization(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    fn tokens() -> token_file::TokenFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "t1,alice,u1\n").unwrap();
        token_file::TokenFile::read(file.path()).unwrap()
    }

    async fn user(auth: &Authenticator, headers: &HeaderMap) -> Result<Arc<UserInfo>, u16> {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(dir.path()).unwrap();
        auth.authenticate(headers, None, &store, &NoObjects)
            .await
            .map(|(user, _)| user)
            .map_err(|e| e.code())
    }

    async fn review(auth: &Authenticator, token: &str, audiences: &[String]) -> TokenVerdict {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(dir.path()).unwrap();
        auth.review_token(token, audiences, &store, &NoObjects)
            .await
    }

    #[tokio::test]
    async fn a_token_no_one_knows_is_refused_and_no_credential_is_anonymous() {
        let auth = Authenticator::default().with_token_file(tokens());
        let alice = user(&auth, &with_authorization("Bearer t1")).await.unwrap();
        assert_eq!(alice.name, "alice");
        let alice = user(&auth, &with_authorization("bearer t1 more"))
            .await
            .unwrap();
        assert_eq!(alice.name, "alice");
        assert_eq!(
            user(&auth, &with_authorization("Bearer nope")).await,
            Err(401)
        );
        // Not a bearer token at all: no credential, as upstream.
        for value in ["Basic YTpi", "Bearer", "Bearer  t1"] {
            let nobody = user(&auth, &with_authorization(value)).await.unwrap();
            assert_eq!(*nobody, UserInfo::anonymous(), "{value}");
        }
        let nobody = user(&auth, &HeaderMap::new()).await.unwrap();
        assert_eq!(nobody.name, "system:anonymous");
        let closed = Authenticator::default().with_anonymous(false);
        assert_eq!(user(&closed, &HeaderMap::new()).await, Err(401));
    }

    #[tokio::test]
    async fn a_token_review_grants_only_the_api_audience_to_static_tokens() {
        let auth = Authenticator::default().with_token_file(tokens());
        let TokenVerdict::User(alice, audiences, _) = review(&auth, "t1", &[]).await else {
            panic!("t1 is alice's");
        };
        assert_eq!(alice.name, "alice");
        assert_eq!(audiences, auth.api_audiences());
        let refused = TokenVerdict::Refused("invalid bearer token".to_owned());
        assert_eq!(review(&auth, "t1", &["foo".to_owned()]).await, refused);
        let both = ["foo".to_owned(), auth.api_audiences()[0].clone()];
        assert!(
            matches!(review(&auth, "t1", &both).await, TokenVerdict::User(_, a, _) if a.len() == 1)
        );
        assert_eq!(review(&auth, "t2", &[]).await, refused);
    }

    #[tokio::test]
    async fn without_a_token_file_every_token_is_refused() {
        let auth = Authenticator::anonymous_only();
        assert_eq!(
            user(&auth, &with_authorization("Bearer anything")).await,
            Err(401)
        );
    }

    #[test]
    fn service_account_names() {
        let sa = UserInfo::new("system:serviceaccount:kube-system:default", &[]);
        assert_eq!(sa.service_account(), Some(("kube-system", "default")));
        assert_eq!(UserInfo::anonymous().service_account(), None);
    }
}
