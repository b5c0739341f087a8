//! The request-header authenticator (k8s.io/apiserver's `requestheader`):
//! a front proxy (an aggregator in front of this server) that presents a
//! client certificate of the `--requestheader-client-ca-file` CAs, with a
//! common name among `--requestheader-allowed-names` (any when none is
//! given), names the user in a header: the first user header with a
//! value, every value of the group headers, and extra attributes in the
//! headers that start with an extra prefix (the rest of the name,
//! lower-cased and %-unescaped, is the key: `X-Remote-Extra-Foo%2fbar` is
//! `foo/bar`). A request from such a proxy without a user header is not
//! this authenticator's.

use axum::http::HeaderMap;

use super::x509::{ClientCertificates, PeerCertificates, Refused};
use crate::user::UserInfo;

/// The front proxies trusted and the headers they use.
#[derive(Debug)]
pub struct RequestHeader {
    pub trusted: ClientCertificates,
    pub allowed_names: Vec<String>,
    pub username_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_headers_prefix: Vec<String>,
}

impl RequestHeader {
    /// The user a front proxy names, if `peer` is one: `Ok(None)` when it
    /// is not (or names no user), `Err` when its certificate is refused.
    pub fn user(
        &self,
        headers: &HeaderMap,
        peer: &PeerCertificates,
    ) -> Result<Option<UserInfo>, Refused> {
        let Some(proxy) = peer.proxy(&self.trusted)? else {
            return Ok(None);
        };
        if !self.allowed_names.is_empty() && !self.allowed_names.contains(&proxy.name) {
            return Err(Refused(format!(
                "client certificate {} is not in the allowed names",
                proxy.name
            )));
        }
        let text = |value: &axum::http::HeaderValue| value.to_str().ok().map(str::to_owned);
        let Some(name) = self.username_headers.iter().find_map(|header| {
            headers
                .get_all(header.as_str())
                .iter()
                .filter_map(text)
                .find(|v| !v.is_empty())
        }) else {
            return Ok(None);
        };
        let mut user = UserInfo::new(&name, &[]);
        for header in &self.group_headers {
            user.groups
                .extend(headers.get_all(header.as_str()).iter().filter_map(text));
        }
        for (header, value) in headers {
            let lower = header.as_str();
            let Some(key) = self.extra_headers_prefix.iter().find_map(|prefix| {
                let prefix = prefix.to_ascii_lowercase();
                lower.strip_prefix(prefix.as_str())
            }) else {
                continue;
            };
            let key = unescape(&key.to_ascii_lowercase());
            if let Some(value) = text(value) {
                user.extra.entry(key).or_default().push(value);
            }
        }
        Ok(Some(user))
    }
}

/// `%XX` sequences decoded (a malformed one is kept as it is).
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_keys_are_lower_cased_and_unescaped() {
        assert_eq!(unescape("foo%2fbar"), "foo/bar");
        assert_eq!(unescape("a%zz"), "a%zz");
        assert_eq!(unescape("scopes"), "scopes");
    }
}
