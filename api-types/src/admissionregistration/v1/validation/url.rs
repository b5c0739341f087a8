//! A webhook's `clientConfig.url`, read the way Go's `net/url.Parse` reads
//! it (kube-apiserver parses it with that function and quotes its error
//! texts), then checked as `webhook.ValidateWebhookURL` checks it: https
//! only, a host, no user info, query or fragment.

use kapi_runtime::validation::{FieldErrors, FieldPath};

/// What the messages about the URL's form end with.
const FORM: &str = "; desired format: https://host[/path]";

/// The parts of a URL the checks look at.
#[derive(Debug, Default, PartialEq)]
struct Url {
    scheme: String,
    host: String,
    user: Option<String>,
    raw_query: String,
    fragment: String,
}

/// `ValidateWebhookURL` with https forced: a URL that does not parse is a
/// `Required` error quoting the parser; otherwise each wrong part is its own
/// `Invalid` error, valued with that part.
pub(super) fn validate_webhook_url(url: &str, path: &FieldPath, errs: &mut FieldErrors) {
    let parsed = match parse(url) {
        Ok(parsed) => parsed,
        Err(reason) => {
            let quoted = go_quote(url);
            let detail = format!("url must be a valid URL: parse {quoted}: {reason}{FORM}");
            errs.required(path.clone(), &detail);
            return;
        }
    };
    if parsed.scheme != "https" {
        let detail = format!("'https' is the only allowed URL scheme{FORM}");
        errs.invalid(path.clone(), parsed.scheme.as_str(), &detail);
    }
    if parsed.host.is_empty() {
        let detail = format!("host must be specified{FORM}");
        errs.invalid(path.clone(), parsed.host.as_str(), &detail);
    }
    if let Some(user) = &parsed.user {
        errs.invalid(
            path.clone(),
            user.as_str(),
            "user information is not permitted in the URL",
        );
    }
    if !parsed.fragment.is_empty() {
        errs.invalid(
            path.clone(),
            parsed.fragment.as_str(),
            "fragments are not permitted in the URL",
        );
    }
    if !parsed.raw_query.is_empty() {
        errs.invalid(
            path.clone(),
            parsed.raw_query.as_str(),
            "query parameters are not permitted in the URL",
        );
    }
}

/// `url.Parse` (not a request URI): the fragment after the first `#`, a
/// scheme, the query after the first `?`, and an authority after `//`.
/// Returns the reason Go gives when it refuses the text.
fn parse(raw: &str) -> Result<Url, String> {
    let (rest, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    if rest.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".to_owned());
    }
    let mut url = Url {
        fragment: unescape(fragment, Mode::Other)?,
        ..Url::default()
    };
    if rest == "*" {
        return Ok(url);
    }
    let (scheme, rest) = split_scheme(rest)?;
    url.scheme = scheme.to_ascii_lowercase();
    let rest = match rest.strip_suffix('?') {
        Some(trimmed) if !trimmed.contains('?') => trimmed,
        _ => match rest.split_once('?') {
            Some((before, query)) => {
                url.raw_query = query.to_owned();
                before
            }
            None => rest,
        },
    };
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            // An opaque URL (`scheme:opaque`) has no host.
            return Ok(url);
        }
        let first_segment = rest.split('/').next().unwrap_or_default();
        if first_segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".to_owned());
        }
    }
    let mut path = rest;
    if let Some(after) = rest.strip_prefix("//")
        && (!url.scheme.is_empty() || !rest.starts_with("///"))
    {
        let (authority, tail) = after
            .find('/')
            .map_or((after, ""), |i| (&after[..i], &after[i..]));
        parse_authority(authority, &mut url)?;
        path = tail;
    }
    unescape(path, Mode::Other)?;
    Ok(url)
}

/// `getScheme`: letters, then letters, digits, `+`, `-` or `.`, up to a `:`.
/// Text that does not look like a scheme is all path.
fn split_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => return Err("missing protocol scheme".to_owned()),
            ':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// `parseAuthority`: optional user info before the last `@`, then the host.
fn parse_authority(authority: &str, url: &mut Url) -> Result<(), String> {
    let (user, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    url.host = parse_host(host)?;
    if let Some(user) = user {
        let allowed = |c: char| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c);
        if !user.chars().all(allowed) {
            return Err("net/url: invalid userinfo".to_owned());
        }
        url.user = Some(unescape(user, Mode::Other)?);
    }
    Ok(())
}

/// `parseHost`: an optional `:port` of digits (after a bracketed IPv6
/// address, or the last `:`), and only characters a host may hold.
fn parse_host(host: &str) -> Result<String, String> {
    let port = if host.starts_with('[') {
        let Some(close) = host.rfind(']') else {
            return Err("missing ']' in host".to_owned());
        };
        &host[close + 1..]
    } else {
        host.rfind(':').map_or("", |i| &host[i..])
    };
    let port_ok = port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()));
    if !port_ok {
        return Err(format!("invalid port {port:?} after host"));
    }
    unescape(host, Mode::Host)
}

/// Where an escaped text sits: the host allows fewer characters.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Host,
    Other,
}

/// `unescape`: `%XX` sequences must be two hex digits; in a host, only
/// characters Go leaves unescaped there may appear.
fn unescape(text: &str, mode: Mode) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = |j: usize| bytes.get(j).and_then(|c| (*c as char).to_digit(16));
            let (Some(hi), Some(lo)) = (hex(i + 1), hex(i + 2)) else {
                let end = (i + 3).min(bytes.len());
                let escape = String::from_utf8_lossy(&bytes[i..end]);
                return Err(format!("invalid URL escape {escape:?}"));
            };
            if mode == Mode::Host && hi < 8 && &text[i..i + 3] != "%25" {
                return Err(format!("invalid URL escape {:?}", &text[i..i + 3]));
            }
            out.push((hi * 16 + lo) as u8);
            i += 3;
            continue;
        }
        if mode == Mode::Host && b < 0x80 && !host_char(b) {
            let quoted = go_quote(&(b as char).to_string());
            return Err(format!("invalid character {quoted} in host name"));
        }
        out.push(b);
        i += 1;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The ASCII characters Go accepts unescaped in a host (`shouldEscape` in
/// host mode is false for them).
fn host_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&b)
}

/// A string as Go's `strconv.Quote` writes it: control characters as `\xNN`
/// (or their short escapes), where Rust's `Debug` would write `\u{N}`.
fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_as_go_does() {
        let url = parse("http://user:pw@/path?q=1#frag").unwrap();
        assert_eq!(url.scheme, "http");
        assert_eq!(url.host, "");
        assert_eq!(url.user.as_deref(), Some("user:pw"));
        assert_eq!(url.raw_query, "q=1");
        assert_eq!(url.fragment, "frag");
        assert_eq!(parse("example.com/path").unwrap().host, "");
        assert_eq!(parse("HTTPS://h:443/x").unwrap().scheme, "https");
        assert_eq!(
            parse("https://exa mple.com/").unwrap_err(),
            "invalid character \" \" in host name"
        );
        assert_eq!(
            parse("https://example.com:abc/").unwrap_err(),
            "invalid port \":abc\" after host"
        );
        assert_eq!(parse(":x").unwrap_err(), "missing protocol scheme");
        assert_eq!(go_quote("a\u{1}\\\"\n"), "\"a\\x01\\\\\\\"\\n\"");
        assert_eq!(
            parse("a:b/c").map(|u| u.scheme),
            Ok("a".to_owned()),
            "an opaque URL"
        );
        assert_eq!(
            parse("/a:b").map(|u| u.host),
            Ok(String::new()),
            "a path with a colon after the first segment"
        );
        assert_eq!(
            parse("https://h/%zz").unwrap_err(),
            "invalid URL escape \"%zz\""
        );
    }
}
