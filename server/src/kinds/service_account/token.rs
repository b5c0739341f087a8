//! Service account tokens (`serviceaccounts/<name>/token`, an
//! authentication.k8s.io/v1 TokenRequest), as kube-apiserver's token REST
//! issues them: a JWT for the service account, for the requested audiences
//! (the API server's by default) and lifetime (an hour by default, ten minutes at
//! least), optionally bound to a pod, secret or node that must exist.
//!
//! Tokens are signed with the issuer's key (`--service-account-signing-key-file`,
//! else a P-256 key kept in the store, so that every replica on one etcd
//! signs with the same key) and name its first issuer. The claims are upstream's: `iss`, `sub`, `aud`, `iat`, `nbf`, `exp`, `jti` and
//! the `kubernetes.io` claim naming the namespace, the service account and
//! the bound objects.

use std::collections::BTreeMap;

use std::sync::Arc;

use async_trait::async_trait;

use crate::admission;
use crate::user::UserInfo;
use jiff::{SignedDuration, Timestamp};
use kapi_api_types::authentication::v1::TokenRequest;
use kapi_api_types::authentication::v1::tokenrequest::{BoundObjectReference, TokenRequestStatus};
use kapi_api_types::core::v1::Pod;
use kapi_runtime::meta::{ObjectMeta, Time};
use kapi_runtime::validation::{FieldErrors, FieldPath};
use serde_json::{Value, json};

use crate::api_error::{ApiError, ApiResult, Target};
use crate::authn::service_account::Issuer;
use crate::registry::hooks::{Action, ActionBody};
use crate::registry::{Object, Registry, Scope};

const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
const MIN_EXPIRATION_SECONDS: i64 = 600;
const MAX_EXPIRATION_SECONDS: i64 = u32::MAX as i64;
/// The lifetime kubelets ask for pod tokens: such a token is valid for a
/// year but says when the client should have refreshed it (`warnafter`), as
/// kube-apiserver's `--service-account-extend-token-expiration` does.
const WARN_ONLY_EXPIRATION_SECONDS: i64 = 3607;
const EXTENDED_EXPIRATION_SECONDS: i64 = 365 * 24 * 3600;

/// What a token is bound to, besides the service account.
#[derive(Default)]
struct Bound {
    pod: Option<(String, String)>,
    secret: Option<(String, String)>,
    /// Name, and uid when the node exists.
    node: Option<(String, Option<String>)>,
}

/// Issues tokens for `serviceaccounts/<name>/token`, signed with the
/// issuer's key (shared with the authenticator that verifies them).
pub struct IssueToken {
    /// The issuer.
    pub issuer: Arc<Issuer>,
}

#[async_trait]
impl Action for IssueToken {
    async fn act(
        &self,
        registry: &Registry,
        accounts: Scope<'_>,
        name: Option<&str>,
        body: ActionBody,
        _dry_run: bool,
        user: &UserInfo,
    ) -> ApiResult<Option<Value>> {
        let (Some(name), ActionBody::Value(request)) = (name, body) else {
            return Err(ApiError::no_route());
        };
        // The body arrives as the JSON its type wrote (normalized at the
        // edge), read typed once here.
        let request: TokenRequest = serde_json::from_value(request).map_err(ApiError::internal)?;
        // NodeRestriction: a node asks only for tokens bound to its pods.
        if let Some(node) = user.node_name() {
            let attrs = admission::Attributes {
                scope: accounts,
                name: name.to_owned(),
                namespace: accounts.namespace.map(str::to_owned),
            };
            crate::admission_plugins::node_restriction::admit_token(
                &attrs, node, &request, registry,
            )
            .await?;
        }
        let answer = self.issue(registry, accounts, name, request).await?;
        serde_json::to_value(&answer)
            .map(Some)
            .map_err(ApiError::internal)
    }
}

impl IssueToken {
    /// Answers a TokenRequest for service account `name` in `accounts`'
    /// namespace: the request, completed, with the token.
    async fn issue(
        &self,
        registry: &Registry,
        accounts: Scope<'_>,
        name: &str,
        mut request: TokenRequest,
    ) -> ApiResult<TokenRequest> {
        let namespace = accounts.namespace.unwrap_or_default().to_owned();
        let mut errs = FieldErrors::default();
        let meta = FieldPath::new("metadata");
        let given_meta = &request.metadata;
        for (field, given, want) in [
            ("name", &given_meta.name, name),
            ("namespace", &given_meta.namespace, namespace.as_str()),
        ] {
            let given = given.as_deref().unwrap_or_default();
            if !given.is_empty() && given != want {
                let detail = format!("must match the service account {field} if specified");
                errs.invalid(meta.child(field), given, &detail);
            }
        }
        if !errs.is_empty() {
            return Err(ApiError::invalid(
                "authentication.k8s.io",
                "TokenRequest",
                name,
                &errs,
            ));
        }
        let account = registry.get(accounts, name).await?;
        let spec = &mut request.spec;
        if spec.audiences.is_empty() {
            spec.audiences = self.issuer.api_audiences().to_vec();
        }
        let expiration = *spec
            .expiration_seconds
            .get_or_insert(DEFAULT_EXPIRATION_SECONDS);
        let now = Time::now();
        request.metadata = ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.clone()),
            creation_timestamp: Some(now),
            ..ObjectMeta::default()
        };
        request.status = TokenRequestStatus::default();
        let path = FieldPath::new("spec").child("expirationSeconds");
        if expiration < MIN_EXPIRATION_SECONDS {
            errs.invalid(
                path,
                expiration,
                "may not specify a duration less than 10 minutes",
            );
        } else if expiration > MAX_EXPIRATION_SECONDS {
            errs.invalid(
                path,
                expiration,
                "may not specify a duration larger than 2^32 seconds",
            );
        }
        if !errs.is_empty() {
            return Err(ApiError::invalid(
                "authentication.k8s.io",
                "TokenRequest",
                "",
                &errs,
            ));
        }
        let reference = request.spec.bound_object_ref.as_ref();
        let bound = Self::bound_objects(registry, reference, name, &namespace).await?;
        let audiences = &request.spec.audiences;
        let mut lifetime = expiration;
        let mut warn_after = None;
        let api = self.issuer.api_audiences();
        let kube_audiences = audiences.iter().all(|a| api.contains(a));
        if bound.pod.is_some() && expiration == WARN_ONLY_EXPIRATION_SECONDS && kube_audiences {
            warn_after = Some(expiration);
            lifetime = EXTENDED_EXPIRATION_SECONDS;
        }
        let times = Times {
            now: now.0,
            lifetime,
            warn_after,
        };
        let claims = claims(
            account.metadata(),
            &bound,
            audiences,
            self.issuer.name(),
            times,
        );
        let token = self
            .issuer
            .signer(registry.storage().as_ref())
            .await?
            .sign(&claims)
            .map_err(|e| ApiError::internal(format!("failed to generate token: {e}")))?;
        request.status = TokenRequestStatus {
            token,
            expiration_timestamp: Some(Time(after(now.0, expiration))),
        };
        Ok(request)
    }

    /// The objects a `boundObjectRef` names: a pod of the service account
    /// (with its node), a secret or a node, which must exist (and have the
    /// uid given, if one is).
    async fn bound_objects(
        registry: &Registry,
        reference: Option<&BoundObjectReference>,
        account: &str,
        namespace: &str,
    ) -> ApiResult<Bound> {
        let mut bound = Bound::default();
        let Some(reference) = reference else {
            return Ok(bound);
        };
        let text = |field: &Option<String>| field.as_deref().unwrap_or_default().to_owned();
        let (api_version, kind, name) = (
            text(&reference.api_version),
            text(&reference.kind),
            text(&reference.name),
        );
        let (api_version, kind, name) = (api_version.as_str(), kind.as_str(), name.as_str());
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let scheme = registry.scheme();
        let core = |plural: &str| {
            scheme
                .get("", "v1", plural)
                .ok_or_else(|| ApiError::internal(format!("{plural} are not served")))
        };
        let uid = match (group, kind) {
            ("", "Pod") => {
                let object = registry
                    .get(Scope::new(core("pods")?, Some(namespace)), name)
                    .await?;
                let pod = object
                    .downcast_ref::<Pod>()
                    .ok_or_else(|| ApiError::internal("a pod of another type"))?;
                if pod.spec.service_account_name.as_deref().unwrap_or_default() != account {
                    return Err(ApiError::bad_request(format!(
                        "cannot bind token for serviceaccount {account:?} to pod running with different serviceaccount name."
                    )));
                }
                let uid = uid_of(&object);
                bound.pod = Some((name.to_owned(), uid.clone()));
                if let Some(node) = pod.spec.node_name.as_deref().filter(|n| !n.is_empty()) {
                    let found = match registry.get(Scope::new(core("nodes")?, None), node).await {
                        Ok(found) => Some(uid_of(&found)),
                        Err(e) if e.code() == 404 => None,
                        Err(e) => return Err(e),
                    };
                    bound.node = Some((node.to_owned(), found));
                }
                uid
            }
            ("", "Node") => {
                let node = registry.get(Scope::new(core("nodes")?, None), name).await?;
                let uid = uid_of(&node);
                bound.node = Some((name.to_owned(), Some(uid.clone())));
                uid
            }
            ("", "Secret") => {
                let secret = registry
                    .get(Scope::new(core("secrets")?, Some(namespace)), name)
                    .await?;
                let uid = uid_of(&secret);
                bound.secret = Some((name.to_owned(), uid.clone()));
                uid
            }
            _ => {
                return Err(ApiError::bad_request(format!(
                    "cannot bind token to object of type {group}/{version}, Kind={kind}"
                )));
            }
        };
        let wanted = reference.uid.as_deref().unwrap_or_default();
        if !wanted.is_empty() && wanted != uid {
            let target = Target {
                group,
                resource: kind,
                name,
            };
            return Err(ApiError::conflict(
                target,
                &format!(
                    "the UID in the bound object reference ({wanted}) does not match the UID in record. The object might have been deleted and then recreated"
                ),
            ));
        }
        Ok(bound)
    }
}

/// When a token is issued, how long it lives, and when its holder should
/// have replaced it.
struct Times {
    now: Timestamp,
    lifetime: i64,
    warn_after: Option<i64>,
}

/// The token's claims; every object's keys in order, as Go writes the merged
/// claim maps.
fn claims(
    account: &ObjectMeta,
    bound: &Bound,
    audiences: &[String],
    issuer: &str,
    Times {
        now,
        lifetime,
        warn_after,
    }: Times,
) -> Value {
    let namespace = account.namespace.as_deref().unwrap_or_default();
    let name = account.name.as_deref().unwrap_or_default();
    let reference = |name: &str, uid: &str| json!({ "name": name, "uid": uid });
    let mut kubernetes: BTreeMap<&str, Value> = BTreeMap::new();
    kubernetes.insert("namespace", json!(namespace));
    let uid = account.uid.as_deref().unwrap_or_default();
    kubernetes.insert("serviceaccount", reference(name, uid));
    if let Some((name, uid)) = &bound.pod {
        kubernetes.insert("pod", reference(name, uid));
    }
    if let Some((name, uid)) = &bound.secret {
        kubernetes.insert("secret", reference(name, uid));
    }
    if let Some((name, uid)) = &bound.node {
        kubernetes.insert(
            "node",
            match uid {
                Some(uid) => reference(name, uid),
                None => json!({ "name": name }),
            },
        );
    }
    if let Some(seconds) = warn_after {
        kubernetes.insert("warnafter", json!(after(now, seconds).as_second()));
    }
    let mut claims: BTreeMap<&str, Value> = BTreeMap::new();
    claims.insert("aud", json!(audiences));
    claims.insert("exp", json!(after(now, lifetime).as_second()));
    claims.insert("iat", json!(now.as_second()));
    claims.insert("iss", json!(issuer));
    claims.insert("jti", json!(uuid::Uuid::new_v4().to_string()));
    claims.insert("kubernetes.io", json!(kubernetes));
    claims.insert("nbf", json!(now.as_second()));
    claims.insert(
        "sub",
        json!(format!("system:serviceaccount:{namespace}:{name}")),
    );
    json!(claims)
}

fn uid_of(object: &Object) -> String {
    object.metadata().uid.clone().unwrap_or_default()
}

fn after(now: Timestamp, seconds: i64) -> Timestamp {
    now.checked_add(SignedDuration::from_secs(seconds))
        .unwrap_or(now)
}
