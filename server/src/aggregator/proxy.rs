//! One request passed to an extension server, as kube-aggregator's
//! `proxyHandler` and apimachinery's `UpgradeAwareHandler` pass it: the same
//! path, the query re-encoded as Go re-encodes it, hop-by-hop headers
//! dropped, the user named in `X-Remote-*` headers, the audit ID and the
//! client's address passed on; the answer streamed back as it comes;
//! upgrades (SPDY, WebSocket) switched through. What goes wrong is answered
//! as upstream answers it: plain text, not a `Status`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;

use super::{RemoteApis, RemoteVersion};
use crate::request_info::RequestInfo;
use crate::tls_client::Transport;
use crate::user::UserInfo;
use crate::webhook_client::join_host_port;

/// How long a discovery request (`/apis/<group>/<version>`) may take at the
/// extension (apiserver's `aggregatedDiscoveryTimeout`).
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);

/// The headers one hop keeps to itself (Go's `httputil.ReverseProxy`).
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The answer's headers apimachinery's proxy drops (its
/// `corsRemovingTransport`).
const CORS: &[&str] = &[
    "access-control-allow-credentials",
    "access-control-allow-headers",
    "access-control-allow-methods",
    "access-control-allow-origin",
];

/// Serves `request` from `remote`'s extension server.
pub async fn serve(apis: &RemoteApis, remote: &RemoteVersion, mut request: Request) -> Response {
    if !remote.available {
        return text(StatusCode::SERVICE_UNAVAILABLE, "service unavailable");
    }
    let transport = match &remote.transport {
        Ok(transport) => transport,
        Err(e) => return text(StatusCode::INTERNAL_SERVER_ERROR, e),
    };
    let Some(user) = request.extensions().get::<Arc<UserInfo>>().cloned() else {
        return text(StatusCode::INTERNAL_SERVER_ERROR, "missing user");
    };
    let service = &remote.service;
    let (host, port) = match apis
        .resolver
        .resolve(&service.namespace, &service.name, service.port)
        .await
    {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!(service = %format!("{}/{}", service.namespace, service.name),
                error = %e, "error resolving");
            return text(StatusCode::SERVICE_UNAVAILABLE, "service unavailable");
        }
    };
    let authority = join_host_port(&host, port);
    let path = request.uri().path().to_owned();
    let mut uri = format!("https://{authority}{path}");
    let query = go_query(request.uri().query().unwrap_or_default());
    if !query.is_empty() {
        uri.push('?');
        uri.push_str(&query);
    }
    let Ok(uri) = uri.parse::<hyper::Uri>() else {
        return text(StatusCode::BAD_REQUEST, "invalid request URI");
    };
    let (discovery, deadline) = {
        let info = RequestInfo::of(&request);
        let discovery = info.resource.is_none()
            && request.uri().path().trim_matches('/').split('/').count() == 3;
        // A watch, and what streams (exec, attach, log, port-forward,
        // proxy), run as long as they last; anything else within the
        // server's request deadline, as upstream's timeout filter bounds it.
        let long_running = info.watch
            || info.resource.as_ref().is_some_and(|r| {
                r.verb == crate::request_info::Verb::Watch
                    || matches!(
                        r.subresource.as_deref(),
                        Some("attach" | "exec" | "proxy" | "log" | "portforward")
                    )
                    || r.resource == "proxy"
            });
        (discovery, (!long_running).then(|| info.deadline()))
    };
    let peer = request
        .extensions()
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let upgrade = is_upgrade(request.headers());
    let on_upgrade = request
        .extensions_mut()
        .remove::<hyper::upgrade::OnUpgrade>();
    let (parts, body) = request.into_parts();
    let mut headers = parts.headers;
    let switching = upgrade && on_upgrade.is_some();
    if !switching {
        // Dropped first, so that no header the client names in
        // `Connection` can take away one the proxy adds below.
        let trailers = headers
            .get_all(header::TE)
            .iter()
            .any(|v| has_token(v, "trailers"));
        remove_hop_by_hop(&mut headers);
        if trailers {
            headers.insert(header::TE, HeaderValue::from_static("trailers"));
        }
    }
    if let Ok(value) = HeaderValue::from_str(&authority) {
        headers.insert(header::HOST, value);
    }
    set_auth_proxy_headers(&mut headers, &user);
    if let Some(ip) = peer {
        append_forwarded_for(&mut headers, ip);
    }
    if let Some(on_upgrade) = on_upgrade.filter(|_| upgrade) {
        return switch(
            transport,
            &host,
            port,
            uri,
            parts.method,
            headers,
            on_upgrade,
        )
        .await;
    }
    // The proxy's own forwarding headers (apimachinery's transport).
    headers.insert("x-forwarded-proto", HeaderValue::from_static("https"));
    if let Ok(value) = HeaderValue::from_str(&authority) {
        headers.insert("x-forwarded-host", value);
    }
    if let Ok(value) = HeaderValue::from_str(&path) {
        headers.insert("x-forwarded-uri", value);
    }
    let mut outgoing = hyper::Request::new(body);
    *outgoing.method_mut() = parts.method;
    *outgoing.uri_mut() = uri;
    *outgoing.headers_mut() = headers;
    let sent = transport.send(outgoing);
    let answer = match (discovery, deadline) {
        (true, _) => match tokio::time::timeout(DISCOVERY_TIMEOUT, sent).await {
            Ok(answer) => answer,
            Err(_) => Err("context deadline exceeded".to_owned()),
        },
        (false, Some(deadline)) => match tokio::time::timeout(deadline, sent).await {
            Ok(answer) => answer,
            // kube-apiserver's timeout filter answers first.
            Err(_) => {
                return crate::api_error::ApiError::timeout(
                    "Timeout: request did not complete within the allotted timeout",
                )
                .into_response();
            }
        },
        (false, None) => sent.await,
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(e) => {
            return text(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("error trying to reach service: {e}"),
            );
        }
    };
    let status = answer.status();
    if status.is_redirection() && answer.headers().contains_key(header::LOCATION) {
        // kube-apiserver's --aggregator-reject-forwarding-redirect (true).
        let mut response = "the backend attempted to redirect this request, which is not permitted"
            .into_response();
        *response.status_mut() = StatusCode::BAD_GATEWAY;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        return response;
    }
    let (mut parts, body) = answer.into_parts();
    remove_hop_by_hop(&mut parts.headers);
    for cors in CORS {
        parts.headers.remove(*cors);
    }
    Response::from_parts(parts, Body::new(body))
}

/// An upgrade: the request on a connection of its own, and once the
/// extension switches protocols, the two connections joined.
async fn switch(
    transport: &Transport,
    host: &str,
    port: u16,
    uri: hyper::Uri,
    method: axum::http::Method,
    headers: HeaderMap,
    on_upgrade: hyper::upgrade::OnUpgrade,
) -> Response {
    let stream = match transport.dial(host, port).await {
        Ok(stream) => stream,
        Err(e) => {
            return text(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("error dialing backend: {e}"),
            );
        }
    };
    let (mut sender, connection) =
        match hyper::client::conn::http1::handshake::<_, Body>(TokioIo::new(stream)).await {
            Ok(handshake) => handshake,
            Err(e) => {
                return text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &format!("error sending request: {e}"),
                );
            }
        };
    tokio::spawn(async move {
        let _ = connection.with_upgrades().await;
    });
    let path = uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "/".to_owned());
    let mut outgoing = hyper::Request::new(Body::empty());
    *outgoing.method_mut() = method;
    if let Ok(path) = path.parse() {
        *outgoing.uri_mut() = path;
    }
    *outgoing.headers_mut() = headers;
    let mut answer = match sender.send_request(outgoing).await {
        Ok(answer) => answer,
        Err(e) => {
            return text(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("error sending request: {e}"),
            );
        }
    };
    let status = answer.status();
    if status != StatusCode::SWITCHING_PROTOCOLS {
        if status.as_u16() < 400 {
            return text(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("invalid upgrade response: status code {}", status.as_u16()),
            );
        }
        // An error from the extension reaches the client as it was.
        let (parts, body) = answer.into_parts();
        return Response::from_parts(parts, Body::new(body));
    }
    let upgraded = hyper::upgrade::on(&mut answer);
    tokio::spawn(async move {
        let (Ok(client), Ok(server)) = (on_upgrade.await, upgraded.await) else {
            return;
        };
        let _ = tokio::io::copy_bidirectional(&mut TokioIo::new(client), &mut TokioIo::new(server))
            .await;
    });
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    *response.headers_mut() = answer.headers().clone();
    response
}

/// Go's `http.Error`: the text and a line end, as plain text.
fn text(status: StatusCode, message: &str) -> Response {
    crate::api_error::plain_text(status, format!("{message}\n"))
}

/// Whether a `Connection` header holds `upgrade` in any case (apimachinery's
/// `httpstream.IsUpgradeRequest`).
fn is_upgrade(headers: &HeaderMap) -> bool {
    headers.get_all(header::CONNECTION).iter().any(|v| {
        v.to_str()
            .unwrap_or_default()
            .to_ascii_lowercase()
            .contains("upgrade")
    })
}

fn has_token(value: &HeaderValue, token: &str) -> bool {
    value
        .to_str()
        .unwrap_or_default()
        .split(',')
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

/// Drops the hop-by-hop headers and those `Connection` names.
fn remove_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .flat_map(|v| v.to_str().unwrap_or_default().split(','))
        .filter_map(|t| HeaderName::from_bytes(t.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in HOP_BY_HOP {
        headers.remove(*name);
    }
}

/// The user in client-go's front-proxy headers (`SetAuthProxyHeaders`):
/// fixed names whatever the server's own `--requestheader-*` flags, one
/// line per group and per extra value, extra keys escaped. The user's UID
/// is not sent (the `RemoteRequestHeaderUID` gate is off in 1.32).
fn set_auth_proxy_headers(headers: &mut HeaderMap, user: &UserInfo) {
    let extras: Vec<HeaderName> = headers
        .keys()
        .filter(|k| k.as_str().starts_with("x-remote-extra-"))
        .cloned()
        .collect();
    for name in extras {
        headers.remove(name);
    }
    for name in ["x-remote-user", "x-remote-uid", "x-remote-group"] {
        headers.remove(name);
    }
    if let Ok(name) = HeaderValue::from_str(&user.name) {
        headers.insert("x-remote-user", name);
    }
    for group in &user.groups {
        if let Ok(group) = HeaderValue::from_str(group) {
            headers.append("x-remote-group", group);
        }
    }
    for (key, values) in &user.extra {
        let Ok(name) =
            HeaderName::from_bytes(format!("x-remote-extra-{}", escape_key(key)).as_bytes())
        else {
            continue;
        };
        for value in values {
            if let Ok(value) = HeaderValue::from_str(value) {
                headers.append(name.clone(), value);
            }
        }
    }
}

/// client-go's `headerKeyEscape`: every byte that is not a token character
/// of RFC 7230, and `%`, as `%XX`.
fn escape_key(key: &str) -> String {
    let mut escaped = String::with_capacity(key.len());
    for byte in key.bytes() {
        let token = byte.is_ascii_alphanumeric() || b"!#$&'*+-.^_`|~".contains(&byte);
        if token {
            escaped.push(char::from(byte));
        } else {
            escaped.push_str(&format!("%{byte:02X}"));
        }
    }
    escaped
}

/// `X-Forwarded-For` with the client's address after any the client sent.
fn append_forwarded_for(headers: &mut HeaderMap, ip: std::net::IpAddr) {
    let prior: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let value = if prior.is_empty() {
        ip.to_string()
    } else {
        format!("{}, {ip}", prior.join(", "))
    };
    if let Ok(value) = HeaderValue::from_str(&value) {
        headers.insert("x-forwarded-for", value);
    }
}

/// A query as Go's `url.ParseQuery` then `Values.Encode` leave it: pairs
/// that do not parse dropped, keys sorted (a key's values in their order),
/// each part escaped as `QueryEscape` escapes it.
pub fn go_query(raw: &str) -> String {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for piece in raw.split('&') {
        if piece.is_empty() || piece.contains(';') {
            continue;
        }
        let (key, value) = piece.split_once('=').unwrap_or((piece, ""));
        let (Some(key), Some(value)) = (unescape(key), unescape(value)) else {
            continue;
        };
        pairs.push((key, value));
    }
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    let mut encoded = String::with_capacity(raw.len());
    for (key, value) in pairs {
        if !encoded.is_empty() {
            encoded.push('&');
        }
        escape_into(&mut encoded, &key);
        encoded.push('=');
        escape_into(&mut encoded, &value);
    }
    encoded
}

/// Go's `QueryUnescape`: `+` is a space; `None` for a bad escape.
fn unescape(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            other => {
                out.push(other);
                i += 1;
            }
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Go's `QueryEscape`.
fn escape_into(out: &mut String, text: &str) {
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(byte));
            }
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_encoded_again_as_go_does() {
        assert_eq!(go_query(""), "");
        assert_eq!(
            go_query("watch=1&labelSelector=a%3Db&allowWatchBookmarks=true"),
            "allowWatchBookmarks=true&labelSelector=a%3Db&watch=1"
        );
        assert_eq!(go_query("a=x+y&b=%7E*&c"), "a=x+y&b=~%2A&c=");
        assert_eq!(go_query("k=2&k=1&bad=%zz&semi=a;b"), "k=2&k=1");
    }

    #[test]
    fn extra_keys_are_escaped_as_client_go_does() {
        assert_eq!(
            escape_key("authentication.kubernetes.io/credential-id"),
            "authentication.kubernetes.io%2Fcredential-id"
        );
        assert_eq!(escape_key("100%"), "100%25");
    }

    #[test]
    fn the_user_replaces_what_the_client_sent() {
        let mut headers = HeaderMap::new();
        headers.insert("x-remote-user", HeaderValue::from_static("mallory"));
        headers.insert("x-remote-extra-scopes", HeaderValue::from_static("all"));
        headers.insert("x-remote-uid", HeaderValue::from_static("1"));
        let user = UserInfo {
            name: "alice".to_owned(),
            uid: "u-1".to_owned(),
            groups: vec!["dev".to_owned(), "system:authenticated".to_owned()],
            extra: [("a/b".to_owned(), vec!["1".to_owned(), "2".to_owned()])].into(),
        };
        set_auth_proxy_headers(&mut headers, &user);
        assert_eq!(headers["x-remote-user"], "alice");
        assert!(!headers.contains_key("x-remote-uid"));
        assert!(!headers.contains_key("x-remote-extra-scopes"));
        let groups: Vec<_> = headers.get_all("x-remote-group").iter().collect();
        assert_eq!(groups, ["dev", "system:authenticated"]);
        let extra: Vec<_> = headers.get_all("x-remote-extra-a%2fb").iter().collect();
        assert_eq!(extra, ["1", "2"]);
    }
}
