//! Bootstrap tokens (`--enable-bootstrap-token-auth`): `<id>.<secret>`,
//! checked against the `kube-system` Secret `bootstrap-token-<id>` of type
//! `bootstrap.kubernetes.io/token`, as kube-apiserver's bootstrap token
//! authenticator does. The user is `system:bootstrap:<id>` in
//! `system:bootstrappers` and the Secret's `auth-extra-groups`.
//!
//! A token of another shape, or whose Secret is missing, being deleted, of
//! another type, expired, not for authentication or with another secret, is
//! not this authenticator's (another may know it); only extra groups outside
//! `system:bootstrappers:` are an error.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::loopback::Loopback;
use crate::user::{UserInfo, add_authenticated};

/// The group of every bootstrap token's user.
const BOOTSTRAPPERS: &str = "system:bootstrappers";

/// What the authenticator makes of a token.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Not a bootstrap token this cluster knows.
    NotOurs,
    /// The token's user.
    User(UserInfo),
    /// The token's Secret is unusable, for this reason.
    Refused(String),
}

/// Whose bootstrap `token` is, read from its Secret through `objects`.
pub async fn authenticate(token: &str, objects: &dyn Loopback) -> Verdict {
    let Some((id, secret)) = parse(token) else {
        return Verdict::NotOurs;
    };
    let name = format!("bootstrap-token-{id}");
    let found = objects
        .read(("", "v1", "secrets"), Some("kube-system"), &name)
        .await;
    let Ok(Some(object)) = found else {
        tracing::debug!(%name, "no bootstrap token secret");
        return Verdict::NotOurs;
    };
    let data = |key: &str| {
        object["data"][key]
            .as_str()
            .and_then(|v| STANDARD.decode(v).ok())
            .map(|v| String::from_utf8_lossy(&v).into_owned())
    };
    let usable = object["metadata"]["deletionTimestamp"].is_null()
        && object["type"] == "bootstrap.kubernetes.io/token"
        && data("token-secret").is_some_and(|s| same_secret(s.as_bytes(), secret.as_bytes()))
        && data("token-id").as_deref() == Some(id)
        && !expired(data("expiration").as_deref())
        && data("usage-bootstrap-authentication").as_deref() == Some("true");
    if !usable {
        return Verdict::NotOurs;
    }
    match groups(data("auth-extra-groups").as_deref()) {
        Ok(groups) => {
            let mut user = UserInfo {
                name: format!("system:bootstrap:{id}"),
                groups,
                ..UserInfo::default()
            };
            add_authenticated(&mut user);
            Verdict::User(user)
        }
        Err(why) => Verdict::Refused(why),
    }
}

/// Whether two secrets are equal, looking at every byte whatever differs
/// (as Go's `subtle.ConstantTimeCompare`): the time taken says nothing of
/// how much of a guess was right.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// `<id>.<secret>`: six and sixteen characters of `[a-z0-9]`.
fn parse(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.split_once('.')?;
    let ok = |part: &str, len: usize| {
        part.len() == len
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    (ok(id, 6) && ok(secret, 16)).then_some((id, secret))
}

/// Whether an `expiration` (RFC 3339) has passed; one that does not parse
/// counts as passed, as upstream.
fn expired(expiration: Option<&str>) -> bool {
    expiration.is_some_and(|text| {
        text.parse::<jiff::Timestamp>()
            .map_or(true, |at| at <= jiff::Timestamp::now())
    })
}

/// `system:bootstrappers` and the extra groups, each of which must be a
/// `system:bootstrappers:` group.
fn groups(extra: Option<&str>) -> Result<Vec<String>, String> {
    let mut groups = vec![BOOTSTRAPPERS.to_owned()];
    for group in extra.unwrap_or_default().split(',').map(str::trim) {
        if group.is_empty() {
            continue;
        }
        let rest = group.strip_prefix("system:bootstrappers:").unwrap_or("");
        let valid = !rest.is_empty()
            && rest.len() <= 256
            && rest
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b':' || b == b'-')
            && rest
                .bytes()
                .last()
                .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if !valid {
            return Err(format!(
                "bootstrap secret has invalid auth-extra-groups: {group:?} is not a valid bootstrap group name (must match ^system:bootstrappers:[a-z0-9:-]{{0,255}}[a-z0-9]$)"
            ));
        }
        groups.push(group.to_owned());
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_have_upstreams_shape() {
        assert_eq!(
            parse("abcdef.0123456789abcdef"),
            Some(("abcdef", "0123456789abcdef"))
        );
        for bad in [
            "abcdef0123456789abcdef",
            "ABCDEF.0123456789abcdef",
            "abcde.0123456789abcdef",
            "abcdef.0123456789abcde",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn extra_groups_must_be_bootstrap_groups() {
        assert_eq!(
            groups(Some(
                "system:bootstrappers:kubeadm:default-node-token, system:bootstrappers:x"
            )),
            Ok(vec![
                BOOTSTRAPPERS.to_owned(),
                "system:bootstrappers:kubeadm:default-node-token".to_owned(),
                "system:bootstrappers:x".to_owned()
            ])
        );
        assert!(groups(Some("system:masters")).is_err());
        assert!(groups(Some("system:bootstrappers:")).is_err());
        assert_eq!(groups(None), Ok(vec![BOOTSTRAPPERS.to_owned()]));
        assert!(expired(Some("2000-01-01T00:00:00Z")));
        assert!(expired(Some("not a time")));
        assert!(!expired(Some("2999-01-01T00:00:00Z")));
        assert!(!expired(None));
    }
}
