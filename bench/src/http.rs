//! Connections to the server under test. Each worker holds its own connection
//! (HTTP/1.1, or HTTP/2 over TLS with ALPN or over plain TCP with prior knowledge,
//! as kapi accepts), so the bench, not a pool, decides how many connections a
//! scenario opens; watches share HTTP/2 connections up to the stream limit.

use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, USER_AGENT};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// The HTTP version requests are sent with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Protocol {
    /// HTTP/1.1, one request at a time per connection.
    H1,
    /// HTTP/2 (ALPN over TLS, prior knowledge over plain TCP).
    H2,
}

/// Where and how to reach the server: address, TLS, token, protocol.
pub struct Target {
    /// `http` or `https`.
    scheme: String,
    /// `host:port`, for TCP and the `Host`/`:authority` header.
    authority: String,
    /// The URL's path prefix (usually empty), put before every request path.
    prefix: String,
    tls: Option<(TlsConnector, ServerName<'static>)>,
    token: Option<String>,
    protocol: Protocol,
}

impl Target {
    /// `url` is `http://host:port` or `https://host:port` (an optional path prefix
    /// is kept); `tls` is required for https.
    pub fn new(
        url: &str,
        token: Option<String>,
        tls: Option<Arc<ClientConfig>>,
        protocol: Protocol,
    ) -> Result<Self> {
        let uri: Uri = url.parse().with_context(|| format!("parsing URL {url}"))?;
        let scheme = uri.scheme_str().unwrap_or("http").to_owned();
        let host = uri.host().ok_or_else(|| anyhow!("URL {url} has no host"))?;
        let default_port = if scheme == "https" { 443 } else { 80 };
        let port = uri.port_u16().unwrap_or(default_port);
        let tls = match (scheme.as_str(), tls) {
            ("https", Some(config)) => {
                let name = ServerName::try_from(host.trim_matches(['[', ']']).to_owned())
                    .with_context(|| format!("server name of {url}"))?;
                Some((TlsConnector::from(config), name))
            }
            ("https", None) => bail!("{url} is https: give --insecure or --ca-file"),
            ("http", _) => None,
            (other, _) => bail!("unsupported URL scheme {other} in {url}"),
        };
        Ok(Self {
            scheme,
            authority: format!("{host}:{port}"),
            prefix: uri.path().trim_end_matches('/').to_owned(),
            tls,
            token,
            protocol,
        })
    }

    /// Opens a new connection and completes the HTTP handshake.
    pub async fn connect(&self) -> Result<Sender> {
        let tcp = TcpStream::connect(&self.authority)
            .await
            .with_context(|| format!("connecting to {}", self.authority))?;
        tcp.set_nodelay(true).context("TCP_NODELAY")?;
        let Some((connector, name)) = &self.tls else {
            return handshake(TokioIo::new(tcp), self.protocol).await;
        };
        let tls = connector
            .connect(name.clone(), tcp)
            .await
            .with_context(|| format!("TLS handshake with {}", self.authority))?;
        // The server picks the protocol through ALPN; without an answer it is HTTP/1.1.
        let protocol = match tls.get_ref().1.alpn_protocol() {
            Some(b"h2") => Protocol::H2,
            _ => Protocol::H1,
        };
        handshake(TokioIo::new(tls), protocol).await
    }

    /// A request for `path` (with its query), with the token and JSON headers.
    pub fn request(
        &self,
        protocol: Protocol,
        method: Method,
        path: &str,
        body: Option<Bytes>,
    ) -> Result<Request<Full<Bytes>>> {
        // HTTP/1.1 sends the path and a Host header; HTTP/2 needs the absolute URI
        // for its :scheme and :authority.
        let uri = match protocol {
            Protocol::H1 => format!("{}{path}", self.prefix),
            Protocol::H2 => format!("{}://{}{}{path}", self.scheme, self.authority, self.prefix),
        };
        let mut builder = Request::builder()
            .method(method)
            .uri(uri)
            .header(ACCEPT, "application/json")
            .header(USER_AGENT, "kapi-bench/0.1");
        if protocol == Protocol::H1 {
            builder = builder.header(HOST, &self.authority);
        }
        if let Some(token) = &self.token {
            builder = builder.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        if body.is_some() {
            builder = builder.header(CONTENT_TYPE, "application/json");
        }
        builder
            .body(Full::new(body.unwrap_or_default()))
            .with_context(|| format!("building request for {path}"))
    }
}

/// Runs the HTTP handshake on an established stream and drives the connection in
/// a background task.
async fn handshake<T>(io: TokioIo<T>, protocol: Protocol) -> Result<Sender>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    match protocol {
        Protocol::H1 => {
            let (sender, connection) = http1::handshake(io).await.context("HTTP/1.1 handshake")?;
            tokio::spawn(connection);
            Ok(Sender::H1(sender))
        }
        Protocol::H2 => {
            let (sender, connection) = http2::Builder::new(TokioExecutor::new())
                .initial_stream_window_size(4 << 20)
                .initial_connection_window_size(16 << 20)
                .handshake(io)
                .await
                .context("HTTP/2 handshake")?;
            tokio::spawn(connection);
            Ok(Sender::H2(sender))
        }
    }
}

/// One open connection.
pub enum Sender {
    /// An HTTP/1.1 connection.
    H1(http1::SendRequest<Full<Bytes>>),
    /// An HTTP/2 connection; clones share it as separate streams.
    H2(http2::SendRequest<Full<Bytes>>),
}

impl Sender {
    /// The protocol this connection speaks.
    pub fn protocol(&self) -> Protocol {
        match self {
            Sender::H1(_) => Protocol::H1,
            Sender::H2(_) => Protocol::H2,
        }
    }

    /// Another handle on the same connection (HTTP/2 only).
    pub fn share(&self) -> Option<Sender> {
        match self {
            Sender::H1(_) => None,
            Sender::H2(sender) => Some(Sender::H2(sender.clone())),
        }
    }

    /// Whether the connection has ended (the server closes idle ones: kube-apiserver
    /// after 90 s of HTTP/2 silence).
    pub fn is_closed(&self) -> bool {
        match self {
            Sender::H1(sender) => sender.is_closed(),
            Sender::H2(sender) => sender.is_closed(),
        }
    }

    /// Sends `request` and returns the response head with its body still streaming.
    pub async fn send(&mut self, request: Request<Full<Bytes>>) -> Result<Response<Incoming>> {
        let response = match self {
            Sender::H1(sender) => {
                sender.ready().await.context("connection closed")?;
                sender.send_request(request).await
            }
            Sender::H2(sender) => {
                sender.ready().await.context("connection closed")?;
                sender.send_request(request).await
            }
        };
        response.context("sending request")
    }
}

/// A worker's connection to the target, reopened after a failure.
pub struct Client {
    target: Arc<Target>,
    sender: Option<Sender>,
}

impl Client {
    /// A client that connects on its first request.
    pub fn new(target: Arc<Target>) -> Self {
        Self {
            target,
            sender: None,
        }
    }

    /// Sends a request and returns the response with its body still streaming.
    pub async fn send(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
    ) -> Result<Response<Incoming>> {
        if self.sender.as_ref().is_none_or(Sender::is_closed) {
            self.sender = Some(self.target.connect().await?);
        }
        let Some(sender) = self.sender.as_mut() else {
            bail!("no connection");
        };
        let request = self.target.request(sender.protocol(), method, path, body)?;
        let result = sender.send(request).await;
        if result.is_err() {
            // A broken connection is replaced on the next request.
            self.sender = None;
        }
        result
    }

    /// Sends a request and reads the whole answer.
    pub async fn call(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
    ) -> Result<(StatusCode, Bytes)> {
        let response = self.send(method.clone(), path, body).await?;
        let status = response.status();
        match response.into_body().collect().await {
            Ok(body) => Ok((status, body.to_bytes())),
            Err(e) => {
                self.sender = None;
                Err(e).with_context(|| format!("reading the answer to {method} {path}"))
            }
        }
    }

    /// Like [`Client::call`], but anything but a 2xx is an error naming the status
    /// and the start of the body (the Kubernetes `Status` message).
    pub async fn call_ok(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Bytes>,
    ) -> Result<Bytes> {
        let (status, bytes) = self.call(method.clone(), path, body).await?;
        if !status.is_success() {
            bail!("{method} {path}: {}", status_error(status, &bytes));
        }
        Ok(bytes)
    }
}

/// "409 Conflict: \<message>" from a Kubernetes `Status` body (or its first bytes).
pub fn status_error(status: StatusCode, body: &[u8]) -> String {
    let message = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned());
    format!("{status}: {message}")
}

/// Percent-encodes a query parameter value (continue tokens, selectors).
pub fn query_escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_are_escaped() {
        assert_eq!(query_escape("eyJ2Ijo+/=="), "eyJ2Ijo%2B%2F%3D%3D");
        assert_eq!(query_escape("a-b_c.d~"), "a-b_c.d~");
    }

    #[test]
    fn https_needs_a_trust_decision() {
        let error = Target::new("https://127.0.0.1:6443", None, None, Protocol::H2);
        assert!(error.is_err());
        let target = Target::new("http://127.0.0.1:6443/prefix/", None, None, Protocol::H1);
        assert!(target.is_ok_and(|t| t.authority == "127.0.0.1:6443" && t.prefix == "/prefix"));
    }
}
