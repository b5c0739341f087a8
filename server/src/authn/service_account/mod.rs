//! Service account tokens: the JWTs kapi issues through
//! `serviceaccounts/<name>/token`, verified as kube-apiserver's service
//! account authenticator verifies bound tokens.
//!
//! A token whose issuer (read before anything is verified) is not kapi's is
//! not this authenticator's to judge. One that claims kapi's issuer must be
//! signed by the service account key, be for one of the audiences asked (the
//! API server's by default), be within its lifetime (a minute of leeway, as
//! go-jose's), and name a service account (and a bound pod, secret or node)
//! that still exists with the same uid and was not deleted more than a minute
//! ago. Its user is `system:serviceaccount:<namespace>:<name>` in
//! `system:serviceaccounts` and `system:serviceaccounts:<namespace>`, with
//! the bound pod and node and the token's id (`JTI=<jti>`) as extras.
//!
//! Legacy tokens of `kubernetes.io/service-account-token` Secrets (issuer
//! `kubernetes/serviceaccount`, signed by kube-controller-manager's key) are
//! not verified: `--service-account-key-file` is not read yet.

pub mod key;

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use kapi_storage::Storage;
use serde_json::Value;

use super::{CREDENTIAL_ID, UserInfo};
use crate::admission::Objects;
use key::ServiceAccountKey;

/// How far a token's times (and a bound object's deletion) may be off.
const LEEWAY_SECONDS: i64 = 60;

/// The verifier of kapi's service account tokens.
pub struct ServiceAccountTokens {
    key: Arc<ServiceAccountKey>,
    issuer: String,
}

impl std::fmt::Debug for ServiceAccountTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccountTokens")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

/// What the authenticator makes of a token.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Not a token of this issuer: another authenticator's, or no one's.
    NotOurs,
    /// The token names this user, for these of the asked audiences.
    User(UserInfo, Vec<String>),
    /// The token claims this issuer but is refused, for this reason.
    Refused(String),
}

impl ServiceAccountTokens {
    /// Verifies tokens of `issuer` signed with `key`.
    pub fn new(key: Arc<ServiceAccountKey>, issuer: &str) -> ServiceAccountTokens {
        ServiceAccountTokens {
            key,
            issuer: issuer.to_owned(),
        }
    }

    /// Whose `token` is, for `audiences`, reading the objects it is bound to
    /// through `objects`.
    pub async fn authenticate(
        &self,
        token: &str,
        audiences: &[String],
        storage: &dyn Storage,
        objects: &dyn Objects,
    ) -> Verdict {
        if unverified_issuer(token).as_deref() != Some(self.issuer.as_str()) {
            return Verdict::NotOurs;
        }
        let signer = match self.key.signer(storage).await {
            Ok(signer) => signer,
            Err(e) => return Verdict::Refused(e.0.message.unwrap_or_default()),
        };
        let Some(claims) = signer.verify(token) else {
            return Verdict::Refused("token could not be verified".to_owned());
        };
        let token_audiences = strings(&claims["aud"]);
        if token_audiences.is_empty() {
            return Verdict::Refused("token does not have an audience".to_owned());
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
        let now = jiff::Timestamp::now().as_second();
        if let Err(why) = check_times(&claims, now) {
            return Verdict::Refused(why);
        }
        match bound_user(&claims, now, objects).await {
            Ok(user) => Verdict::User(user, granted),
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
async fn bound_user(claims: &Value, now: i64, objects: &dyn Objects) -> Result<UserInfo, String> {
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
    super::add_authenticated(&mut user);
    Ok(user)
}

/// A core/v1 object the token names; its absence in upstream's words.
async fn find(
    objects: &dyn Objects,
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
