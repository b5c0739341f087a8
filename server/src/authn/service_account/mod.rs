//! Service account tokens, verified as kube-apiserver's service account
//! authenticators verify them.
//!
//! A token whose issuer (read before anything is verified) is neither one of
//! the [`Issuer`]'s names nor the legacy `kubernetes/serviceaccount` is not
//! this authenticator's to judge. Any other must be signed by one of the
//! issuer's keys and be for one of the audiences asked (the API server's by
//! default).
//!
//! - A bound token (issued through `serviceaccounts/<name>/token`) must be
//!   within its lifetime (a minute of leeway, as go-jose's) and name a service
//!   account (and a bound pod, secret or node) that still exists with the
//!   same uid and was not deleted more than a minute ago. Its user has the
//!   bound pod and node and the token's id (`JTI=<jti>`) as extras.
//! - A legacy token (kube-controller-manager's, in a
//!   `kubernetes.io/service-account-token` Secret) carries no audience (it is
//!   good for the API server's) and must still be the Secret's `token`, for
//!   a service account that exists with the uid it names. Its Secret gets the
//!   day's `kubernetes.io/legacy-token-last-used` label; one labelled
//!   `kubernetes.io/legacy-token-invalid-since` is refused; a Secret the
//!   service account lists (an auto-generated one) earns the request a
//!   warning.
//!
//! Either's user is `system:serviceaccount:<namespace>:<name>` in
//! `system:serviceaccounts` and `system:serviceaccounts:<namespace>`.

pub mod issuer;
pub mod key;

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use kapi_storage::Storage;
use serde_json::{Value, json};

use super::Notes;
use crate::loopback::Loopback;
use crate::user::{CREDENTIAL_ID, UserInfo, add_authenticated};
pub use issuer::Issuer;

/// How far a token's times (and a bound object's deletion) may be off.
const LEEWAY_SECONDS: i64 = 60;

/// The issuer of kube-controller-manager's secret-based tokens.
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";
/// The label recording the day a legacy token was last used.
pub const LAST_USED_LABEL: &str = "kubernetes.io/legacy-token-last-used";
/// The label that marks a legacy token invalid.
pub const INVALID_SINCE_LABEL: &str = "kubernetes.io/legacy-token-invalid-since";

/// The verifier of service account tokens.
#[derive(Debug)]
pub struct ServiceAccountTokens {
    issuer: Arc<Issuer>,
}

/// What the authenticator makes of a token.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Not a token of this issuer: another authenticator's, or no one's.
    NotOurs,
    /// The token names this user, for these of the asked audiences, with
    /// these notes for the request.
    User(UserInfo, Vec<String>, Notes),
    /// The token claims this issuer but is refused, for this reason.
    Refused(String),
}

impl ServiceAccountTokens {
    /// Verifies the tokens of `issuer`, and legacy ones signed with its keys.
    pub fn new(issuer: Arc<Issuer>) -> ServiceAccountTokens {
        ServiceAccountTokens { issuer }
    }

    /// The issuer.
    pub fn issuer(&self) -> &Arc<Issuer> {
        &self.issuer
    }

    /// Whose `token` is, for `audiences`, reading the objects it is bound to
    /// through `objects`.
    pub async fn authenticate(
        &self,
        token: &str,
        audiences: &[String],
        storage: &dyn Storage,
        objects: &dyn Loopback,
    ) -> Verdict {
        let Some(issuer) = unverified_issuer(token) else {
            return Verdict::NotOurs;
        };
        let legacy = issuer == LEGACY_ISSUER;
        if !legacy && !self.issuer.names().contains(&issuer) {
            return Verdict::NotOurs;
        }
        let claims = match self.issuer.verify(token, storage).await {
            Ok(Ok(claims)) => claims,
            Ok(Err(why)) => return Verdict::Refused(why),
            Err(e) => return Verdict::Refused(e.0.message.unwrap_or_default()),
        };
        let mut token_audiences = strings(&claims["aud"]);
        let mut notes = Notes::default();
        if token_audiences.is_empty() {
            // A token without audiences (a legacy one) is good for the API
            // server alone.
            let subject = claims["sub"].as_str().unwrap_or_default().to_owned();
            notes.annotate("authentication.k8s.io/legacy-token", subject);
            token_audiences = self.issuer.api_audiences().to_vec();
        }
        let granted: Vec<String> = token_audiences
            .iter()
            .filter(|a| audiences.contains(a))
            .cloned()
            .collect();
        if granted.is_empty() {
            return Verdict::Refused(format!(
                "token audiences {} is invalid for the target audiences {}",
                go_quoted(&token_audiences),
                go_quoted(audiences)
            ));
        }
        let now = jiff::Timestamp::now();
        if let Err(why) = check_times(&claims, now.as_second()) {
            return Verdict::Refused(why);
        }
        let user = if legacy {
            legacy_user(token, &claims, now, objects, &mut notes).await
        } else {
            bound_user(&claims, now.as_second(), objects).await
        };
        match user {
            Ok(user) => Verdict::User(user, granted, notes),
            Err(why) => Verdict::Refused(why),
        }
    }
}

/// The `iss` of a JWT's payload, before anything is verified (how upstream
/// picks the authenticator of a token).
fn unverified_issuer(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    claims["iss"].as_str().map(str::to_owned)
}

/// go-jose's checks of `exp`, `nbf` and `iat`, with its leeway, and
/// upstream's words for them.
fn check_times(claims: &Value, now: i64) -> Result<(), String> {
    let at = |name: &str| claims[name].as_i64();
    if at("exp").is_some_and(|exp| now - LEEWAY_SECONDS > exp) {
        return Err("service account token has expired".to_owned());
    }
    let early = |t: Option<i64>| t.is_some_and(|t| now + LEEWAY_SECONDS < t);
    if early(at("nbf")) || early(at("iat")) {
        return Err(
            "service account token claims could not be validated due to unexpected validation error"
                .to_owned(),
        );
    }
    Ok(())
}

/// The user of verified `claims`, once the service account and the bound
/// objects are found as the token names them.
async fn bound_user(claims: &Value, now: i64, objects: &dyn Loopback) -> Result<UserInfo, String> {
    let kubernetes = &claims["kubernetes.io"];
    let namespace = kubernetes["namespace"].as_str().unwrap_or_default();
    let reference = |what: &str| {
        let r = &kubernetes[what];
        r.is_object().then(|| {
            (
                r["name"].as_str().unwrap_or_default().to_owned(),
                r["uid"].as_str().unwrap_or_default().to_owned(),
            )
        })
    };
    let Some((account, account_uid)) = reference("serviceaccount") else {
        return Err("service account token has no service account claim".to_owned());
    };
    let found = find(objects, "serviceaccounts", Some(namespace), &account).await?;
    if deleted(&found, now) {
        return Err(format!(
            "service account {namespace}/{account} has been deleted"
        ));
    }
    check_uid(&found, &account_uid, |have, want| {
        format!("service account UID ({have}) does not match claim ({want})")
    })?;
    let mut user = UserInfo {
        name: format!("system:serviceaccount:{namespace}:{account}"),
        uid: account_uid,
        groups: vec![
            "system:serviceaccounts".to_owned(),
            format!("system:serviceaccounts:{namespace}"),
        ],
        extra: BTreeMap::new(),
    };
    let mut extra = |key: &str, value: String| {
        user.extra
            .insert(format!("authentication.kubernetes.io/{key}"), vec![value]);
    };
    if let Some((secret, uid)) = reference("secret") {
        let found = find(objects, "secrets", Some(namespace), &secret).await?;
        if deleted(&found, now) {
            return Err(format!(
                "bound secret {namespace}/{secret} has been deleted"
            ));
        }
        check_uid(&found, &uid, |have, want| {
            format!("secret UID ({have}) does not match service account secret ref claim ({want})")
        })?;
    }
    if let Some((pod, uid)) = reference("pod") {
        let found = find(objects, "pods", Some(namespace), &pod).await?;
        if deleted(&found, now) {
            return Err(format!("bound pod {namespace}/{pod} has been deleted"));
        }
        check_uid(&found, &uid, |have, want| {
            format!("pod UID ({have}) does not match service account pod ref claim ({want})")
        })?;
        extra("pod-name", pod);
        extra("pod-uid", uid);
    }
    if let Some((node, uid)) = reference("node") {
        let found = find(objects, "nodes", None, &node).await?;
        if deleted(&found, now) {
            return Err(format!("bound node {node} has been deleted"));
        }
        if !uid.is_empty() {
            check_uid(&found, &uid, |have, want| {
                format!("node UID ({have}) does not match service account node ref claim ({want})")
            })?;
        }
        extra("node-name", node);
        if !uid.is_empty() {
            extra("node-uid", uid);
        }
    }
    if let Some(jti) = claims["jti"].as_str().filter(|j| !j.is_empty()) {
        user.extra
            .insert(CREDENTIAL_ID.to_owned(), vec![format!("JTI={jti}")]);
    }
    add_authenticated(&mut user);
    Ok(user)
}

/// The user of verified legacy `claims`, once its Secret still holds
/// `token` for the service account it names, which exists with the uid it
/// names; the Secret's last-used day is kept current.
async fn legacy_user(
    token: &str,
    claims: &Value,
    now: jiff::Timestamp,
    objects: &dyn Loopback,
    notes: &mut Notes,
) -> Result<UserInfo, String> {
    let claim = |name: &str| {
        claims[format!("kubernetes.io/serviceaccount/{name}").as_str()]
            .as_str()
            .unwrap_or_default()
    };
    let subject = claims["sub"].as_str().unwrap_or_default();
    let (namespace, secret_name) = (claim("namespace"), claim("secret.name"));
    let (account, account_uid) = (claim("service-account.name"), claim("service-account.uid"));
    for (value, missing) in [
        (subject, "sub claim is missing"),
        (namespace, "namespace claim is missing"),
        (secret_name, "secretName claim is missing"),
        (account, "serviceAccountName claim is missing"),
        (account_uid, "serviceAccountUID claim is missing"),
    ] {
        if value.is_empty() {
            return Err(missing.to_owned());
        }
    }
    let named = UserInfo::new(subject, &[]);
    if named.service_account() != Some((namespace, account)) {
        return Err("sub claim is invalid".to_owned());
    }
    let invalidated = || "Token has been invalidated".to_owned();
    let secret = match objects
        .read(("", "v1", "secrets"), Some(namespace), secret_name)
        .await
    {
        Ok(Some(secret)) => secret,
        Ok(None) | Err(_) => return Err(invalidated()),
    };
    if !secret["metadata"]["deletionTimestamp"].is_null() {
        return Err(invalidated());
    }
    let kept = secret["data"]["token"]
        .as_str()
        .and_then(|t| STANDARD.decode(t).ok());
    if kept.as_deref() != Some(token.as_bytes()) {
        return Err("Token does not match server's copy".to_owned());
    }
    let found = find(objects, "serviceaccounts", Some(namespace), account).await?;
    if !found["metadata"]["deletionTimestamp"].is_null() {
        return Err(format!(
            "ServiceAccount {namespace}/{account} has been deleted"
        ));
    }
    check_uid(&found, account_uid, |have, want| {
        format!("ServiceAccount UID ({have}) does not match claim ({want})")
    })?;
    let listed = found["secrets"]
        .as_array()
        .is_some_and(|refs| refs.iter().any(|r| r["name"] == secret_name));
    // Which kind of Secret it was, for the audit events.
    if listed {
        notes.warn(
            "Use tokens from the TokenRequest API or manually created secret-based tokens \
             instead of auto-generated secret-based tokens.",
        );
        notes.annotate(
            "authentication.k8s.io/legacy-token-autogenerated-secret",
            secret_name.to_owned(),
        );
    } else {
        notes.annotate(
            "authentication.k8s.io/legacy-token-manual-secret",
            secret_name.to_owned(),
        );
    }
    let labels = &secret["metadata"]["labels"];
    let today = now.strftime("%Y-%m-%d").to_string();
    let tomorrow = now
        .checked_add(jiff::SignedDuration::from_hours(24))
        .unwrap_or(now)
        .strftime("%Y-%m-%d")
        .to_string();
    let last_used = labels[LAST_USED_LABEL].as_str().unwrap_or_default();
    if last_used != today && last_used != tomorrow {
        let stamp = |secret: &mut Value| {
            secret["metadata"]["labels"][LAST_USED_LABEL] = json!(today);
            Ok(())
        };
        if let Err(e) = objects
            .edit(("", "v1", "secrets"), Some(namespace), secret_name, &stamp)
            .await
        {
            tracing::warn!(namespace, secret = secret_name, error = ?e,
                "the legacy token's last-used label was not written");
        }
    }
    if labels[INVALID_SINCE_LABEL]
        .as_str()
        .is_some_and(|since| !since.is_empty())
    {
        notes.annotate(
            "authentication.k8s.io/legacy-token-invalidated",
            format!("{secret_name}/{namespace}"),
        );
        return Err(format!(
            "the token in secret {namespace}/{secret_name} for service account \
             {namespace}/{account} has been marked invalid. Use tokens from the TokenRequest \
             API or manually created secret-based tokens, or remove the \
             '{INVALID_SINCE_LABEL}' label from the secret to temporarily allow use of this \
             token"
        ));
    }
    let mut user = UserInfo {
        name: subject.to_owned(),
        uid: account_uid.to_owned(),
        groups: vec![
            "system:serviceaccounts".to_owned(),
            format!("system:serviceaccounts:{namespace}"),
        ],
        extra: BTreeMap::new(),
    };
    add_authenticated(&mut user);
    Ok(user)
}

/// A core/v1 object the token names; its absence in upstream's words.
async fn find(
    objects: &dyn Loopback,
    plural: &str,
    namespace: Option<&str>,
    name: &str,
) -> Result<Value, String> {
    match objects.read(("", "v1", plural), namespace, name).await {
        Ok(Some(object)) => Ok(object),
        Ok(None) => Err(format!("{plural} {name:?} not found")),
        Err(e) => Err(e.0.message.unwrap_or_default()),
    }
}

fn check_uid(
    object: &Value,
    want: &str,
    words: impl Fn(&str, &str) -> String,
) -> Result<(), String> {
    let have = object["metadata"]["uid"].as_str().unwrap_or_default();
    if have == want {
        Ok(())
    } else {
        Err(words(have, want))
    }
}

/// Whether `object` was marked deleted more than the leeway ago.
fn deleted(object: &Value, now: i64) -> bool {
    object["metadata"]["deletionTimestamp"]
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .is_some_and(|t| t.as_second() < now - LEEWAY_SECONDS)
}

fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::String(one) => vec![one.clone()],
        Value::Array(many) => many
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// Go's `%q` of a string slice: `["a" "b"]`.
fn go_quoted(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_are_checked_with_a_minute_of_leeway() {
        let claims = json!({"exp": 1000, "nbf": 500, "iat": 500});
        assert_eq!(check_times(&claims, 1059), Ok(()));
        assert_eq!(
            check_times(&claims, 1061),
            Err("service account token has expired".to_owned())
        );
        assert_eq!(check_times(&claims, 441), Ok(()));
        assert!(check_times(&claims, 439).is_err());
    }

    #[test]
    fn the_issuer_is_read_before_verifying() {
        let payload = URL_SAFE_NO_PAD.encode(br#"{"iss":"https://x"}"#);
        assert_eq!(
            unverified_issuer(&format!("h.{payload}.s")).as_deref(),
            Some("https://x")
        );
        assert_eq!(unverified_issuer("tok1"), None);
        assert_eq!(go_quoted(&["a".into(), "b".into()]), r#"["a" "b"]"#);
    }
}
