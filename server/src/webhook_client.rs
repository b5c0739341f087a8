//! Calls to webhooks, the way kube-apiserver's webhook client makes them
//! (k8s.io/apiserver's `pkg/util/webhook`): a JSON `POST` over TLS to a URL
//! or to a Service, the server's certificate checked against the
//! configuration's `caBundle`, with an upper bound on the call's time, and
//! connections kept open for the next call to the same place.
//!
//! Admission webhooks and conversion webhooks both go through here. What
//! goes wrong is worded as Go's HTTP client and client-go's REST client word
//! it (`Post "https://...": context deadline exceeded`, `an error on the
//! server ("...") has prevented the request from succeeding`), because
//! upstream passes those texts on to the client in its errors.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
use serde_json::Value;
use tokio::net::TcpStream;

/// A webhook's `clientConfig` (the same shape in admission and conversion
/// webhooks).
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// `url`: `https://host[:port][/path]`.
    pub url: Option<String>,
    /// `service`: a Service in the cluster.
    pub service: Option<ServiceRef>,
    /// `caBundle`: PEM certificates the webhook's certificate must chain to.
    pub ca_bundle: Vec<u8>,
}

/// `clientConfig.service`.
#[derive(Clone, Debug, Default)]
pub struct ServiceRef {
    /// The Service's namespace.
    pub namespace: String,
    /// The Service's name.
    pub name: String,
    /// The URL path to post to (`/` when not given).
    pub path: Option<String>,
    /// The Service's port (443 when not given).
    pub port: Option<i32>,
}

/// Finds where a Service's webhook listens: the address and port to dial.
#[async_trait]
pub trait Resolve: Send + Sync {
    /// The address of Service `namespace/name`'s port `port`; `Err` worded
    /// as upstream's service resolver words it.
    async fn resolve(
        &self,
        namespace: &str,
        name: &str,
        port: i32,
    ) -> Result<(String, u16), String>;
}

/// Where a webhook is and how it is trusted, parsed once per configuration.
#[derive(Clone)]
pub struct Target {
    address: Address,
    /// The name the webhook's certificate must carry (SNI too).
    server_name: String,
    /// `https://authority/path`, as errors show it (before the query).
    url: String,
    /// The `Host` header: the URL's authority.
    authority: String,
    /// The path posted to, without query.
    path: String,
    tls: Arc<rustls::ClientConfig>,
    /// Which connections may be reused for this target.
    key: PoolKey,
}

#[derive(Clone, Debug)]
enum Address {
    /// A URL's host and port.
    Fixed { host: String, port: u16 },
    /// A Service's port, resolved on each call.
    Service {
        namespace: String,
        name: String,
        port: i32,
    },
}

/// Connections are shared by calls to the same address, server name and
/// trusted certificates.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PoolKey {
    host: String,
    port: u16,
    server_name: String,
    trust: u64,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target").field("url", &self.url).finish()
    }
}

impl Target {
    /// The target of `config`; `Err` is upstream's text for a configuration
    /// it cannot call (`webhook configuration must have either service or
    /// URL`, `Unparsable URL: ...`, a bad `caBundle`).
    pub fn new(config: &Config) -> Result<Target, String> {
        let (address, server_name, path, url, authority) = if let Some(service) = &config.service {
            let port = service.port.unwrap_or(443);
            let server_name = format!("{}.{}.svc", service.name, service.namespace);
            let path = clean_path(service.path.as_deref().unwrap_or_default());
            let url = format!("https://{server_name}:{port}{path}");
            let authority = format!("{server_name}:{port}");
            let address = Address::Service {
                namespace: service.namespace.clone(),
                name: service.name.clone(),
                port,
            };
            (address, server_name, path, url, authority)
        } else if let Some(url) = &config.url {
            let uri: hyper::Uri = url
                .parse()
                .map_err(|e| format!("Unparsable URL: parse {url:?}: {e}"))?;
            if uri.scheme_str() != Some("https") {
                return Err(format!("Unparsable URL: {url:?} is not an https URL"));
            }
            let authority = uri
                .authority()
                .ok_or_else(|| format!("Unparsable URL: {url:?} has no host"))?;
            let host = authority
                .host()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned();
            let port = authority.port_u16().unwrap_or(443);
            let path = clean_path(uri.path());
            let shown = format!("https://{authority}{path}");
            let authority = authority.as_str().to_owned();
            (
                Address::Fixed {
                    host: host.clone(),
                    port,
                },
                host,
                path,
                shown,
                authority,
            )
        } else {
            return Err("webhook configuration must have either service or URL".to_owned());
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?;
        // Upstream skips what does not parse as a certificate.
        let builder = match bundle_verifier(&config.ca_bundle, &provider) {
            Some(verifier) => builder
                .dangerous()
                .with_custom_certificate_verifier(verifier),
            None => builder.with_root_certificates(rustls::RootCertStore::empty()),
        };
        let mut tls = builder.with_no_client_auth();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        config.ca_bundle.hash(&mut hasher);
        let key = PoolKey {
            host: match &address {
                Address::Fixed { host, .. } => host.clone(),
                Address::Service { .. } => String::new(),
            },
            port: match &address {
                Address::Fixed { port, .. } => *port,
                Address::Service { .. } => 0,
            },
            server_name: server_name.clone(),
            trust: hasher.finish(),
        };
        Ok(Target {
            address,
            server_name,
            url,
            authority,
            path,
            tls: Arc::new(tls),
            key,
        })
    }

    /// The URL posted to with `query` (`timeout=10s`), as errors show it.
    pub fn url(&self, query: &str) -> String {
        if query.is_empty() {
            self.url.clone()
        } else {
            format!("{}?{query}", self.url)
        }
    }
}

/// The webhook client: idle connections by target.
#[derive(Default)]
pub struct Client {
    idle: Mutex<HashMap<PoolKey, Vec<SendRequest<Full<Bytes>>>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("webhook_client::Client")
            .finish_non_exhaustive()
    }
}

/// Idle connections kept per target.
const IDLE_PER_TARGET: usize = 32;

/// What a call gives back: the body of a 2xx answer.
pub type Answer = Bytes;

/// A call that failed: client-go's words for it, and the answer's status
/// code when the webhook answered with one that is not 2xx.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub status: Option<u16>,
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure {
            status: None,
            message,
        }
    }
}

impl Client {
    /// POSTs `body` (JSON) to `target` with `query`, within `timeout`,
    /// finding a Service's address through `resolver`; `Err` is the call's
    /// failure as client-go words it.
    pub async fn post(
        &self,
        target: &Target,
        resolver: Option<&dyn Resolve>,
        query: &str,
        body: Bytes,
        timeout: Duration,
    ) -> Result<Answer, Failure> {
        let url = target.url(query);
        let exchange = self.exchange(target, resolver, query, body, &url);
        match tokio::time::timeout(timeout, exchange).await {
            Ok(answer) => answer,
            Err(_) => Err(format!("Post {}: context deadline exceeded", go_quote(&url)).into()),
        }
    }

    async fn exchange(
        &self,
        target: &Target,
        resolver: Option<&dyn Resolve>,
        query: &str,
        body: Bytes,
        url: &str,
    ) -> Result<Answer, Failure> {
        let post_error = |e: String| format!("Post {}: {e}", go_quote(url));
        let (key, mut sender) = self
            .connection(target, resolver)
            .await
            .map_err(post_error)?;
        let path = if query.is_empty() {
            if target.path.is_empty() {
                "/".to_owned()
            } else {
                target.path.clone()
            }
        } else {
            format!(
                "{}?{query}",
                if target.path.is_empty() {
                    "/"
                } else {
                    &target.path
                }
            )
        };
        let request = hyper::Request::post(path)
            .header(hyper::header::HOST, target.authority.as_str())
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .header(hyper::header::ACCEPT, "application/json, */*")
            .header(hyper::header::USER_AGENT, "kube-apiserver-admission")
            .body(Full::new(body))
            .map_err(|e| post_error(e.to_string()))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| post_error(e.to_string()))?;
        let status = response.status();
        let given_type = response
            .headers()
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| post_error(e.to_string()))?
            .to_bytes();
        self.give_back(key, sender);
        if !status.is_success() {
            return Err(Failure {
                status: Some(status.as_u16()),
                message: response_error(status.as_u16(), given_type.as_deref(), &body),
            });
        }
        if body.is_empty() {
            // client-go names the content type it asked for when none came.
            let content_type = given_type.as_deref().unwrap_or("application/json");
            return Err(format!(
                "0-length response with status code: {} and content type: {content_type}",
                status.as_u16()
            )
            .into());
        }
        Ok(body)
    }

    /// An idle connection to `target`, or a new one.
    async fn connection(
        &self,
        target: &Target,
        resolver: Option<&dyn Resolve>,
    ) -> Result<(PoolKey, SendRequest<Full<Bytes>>), String> {
        let (host, port) = match &target.address {
            Address::Fixed { host, port } => (host.clone(), *port),
            Address::Service {
                namespace,
                name,
                port,
            } => match resolver {
                Some(resolver) => resolver.resolve(namespace, name, *port).await?,
                None => return Err(format!("no resolver for service {namespace}/{name}")),
            },
        };
        let key = PoolKey {
            host: host.clone(),
            port,
            ..target.key.clone()
        };
        {
            let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(senders) = idle.get_mut(&key) {
                while let Some(sender) = senders.pop() {
                    if sender.is_ready() {
                        return Ok((key, sender));
                    }
                }
            }
        }
        let tcp = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| {
                format!(
                    "dial tcp {}: {}",
                    join_host_port(&host, port),
                    dial_error(&e)
                )
            })?;
        let _ = tcp.set_nodelay(true);
        let name = ServerName::try_from(target.server_name.clone()).map_err(|e| e.to_string())?;
        let tls = tokio_rustls::TlsConnector::from(target.tls.clone())
            .connect(name, tcp)
            .await
            .map_err(|e| tls_error(&e, &target.server_name))?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
                .await
                .map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok((key, sender))
    }

    /// Keeps a connection whose answer was read whole for the next call.
    fn give_back(&self, key: PoolKey, sender: SendRequest<Full<Bytes>>) {
        if sender.is_closed() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        let senders = idle.entry(key).or_default();
        if senders.len() < IDLE_PER_TARGET {
            senders.push(sender);
        }
    }
}

/// Trusts the certificates of a CA bundle as Go's x509 pool does: as roots
/// a server's chain may end at, and also each as itself, so that a bundle
/// holding the server's own (leaf) certificate trusts that certificate
/// (envtest and many webhook set-ups give the serving certificate as
/// `caBundle`); its name and validity are still checked. `None` when the
/// bundle holds no certificate.
pub(crate) fn bundle_verifier(
    bundle: &[u8],
    provider: &Arc<rustls::crypto::CryptoProvider>,
) -> Option<Arc<dyn rustls::client::danger::ServerCertVerifier>> {
    let certificates: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(bundle)
        .filter_map(Result::ok)
        .collect();
    let mut roots = rustls::RootCertStore::empty();
    for cert in &certificates {
        let _ = roots.add(cert.clone());
    }
    let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .ok()?;
    Some(Arc::new(BundleVerifier {
        inner,
        certificates,
    }))
}

#[derive(Debug)]
struct BundleVerifier {
    inner: Arc<rustls::client::WebPkiServerVerifier>,
    certificates: Vec<CertificateDer<'static>>,
}

impl rustls::client::danger::ServerCertVerifier for BundleVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        use rustls::{CertificateError, Error};
        // Go trusts a certificate that is itself in the pool, before any
        // chain is looked for.
        if self
            .certificates
            .iter()
            .any(|c| c.as_ref() == end_entity.as_ref())
        {
            let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
            rustls::client::verify_server_name(&parsed, server_name)?;
            let valid = x509_parser::parse_x509_certificate(end_entity.as_ref())
                .is_ok_and(|(_, cert)| cert.validity().is_valid());
            if !valid {
                return Err(Error::InvalidCertificate(CertificateError::Expired));
            }
            return Ok(rustls::client::danger::ServerCertVerified::assertion());
        }
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// A webhook's path as client-go's REST client makes it
/// (`path.Join("/", path)`): one slash between segments, `.` and `..`
/// resolved, no slash at the end; `/` for none.
fn clean_path(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    format!("/{}", segments.join("/"))
}

/// Go's `%q` of a string (the URL in `Post "..."`).
fn go_quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{text}\""))
}

/// `host:port`, with brackets around an IPv6 address (Go's JoinHostPort).
pub(crate) fn join_host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// A dial failure as Go words it.
pub(crate) fn dial_error(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connect: connection refused".to_owned(),
        std::io::ErrorKind::TimedOut => "i/o timeout".to_owned(),
        _ => e.to_string(),
    }
}

/// A TLS failure as Go's crypto/tls words it, where the cause is one Go
/// names the same way.
pub(crate) fn tls_error(e: &std::io::Error, server_name: &str) -> String {
    use rustls::{CertificateError, Error};
    let inner = e.get_ref().and_then(|inner| inner.downcast_ref::<Error>());
    match inner {
        Some(Error::InvalidCertificate(CertificateError::UnknownIssuer)) => {
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
                .to_owned()
        }
        Some(Error::InvalidCertificate(CertificateError::NotValidForNameContext {
            presented,
            ..
        })) => format!(
            "tls: failed to verify certificate: {}",
            hostname_error(server_name, presented)
        ),
        Some(Error::InvalidCertificate(
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. },
        )) => {
            "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
                .to_owned()
        }
        Some(other) => format!("tls: {other}"),
        None => e.to_string(),
    }
}

/// Go's `x509.HostnameError` for a certificate presenting the names
/// `presented` (as webpki lists them: `DnsName("a")`, `IpAddress(1.2.3.4)`)
/// when `host` was wanted: an IP is matched against IP names only.
fn hostname_error(host: &str, presented: &[String]) -> String {
    let names = |kind: &str| -> Vec<String> {
        presented
            .iter()
            .filter_map(|p| {
                let inner = p.strip_prefix(kind)?.strip_prefix('(')?.strip_suffix(')')?;
                Some(inner.trim_matches('"').to_owned())
            })
            .collect()
    };
    let valid = if host.parse::<std::net::IpAddr>().is_ok() {
        let ips = names("IpAddress");
        if ips.is_empty() {
            return format!(
                "x509: cannot validate certificate for {host} because it doesn't contain any IP SANs"
            );
        }
        ips.join(", ")
    } else {
        names("DnsName").join(", ")
    };
    if valid.is_empty() {
        return format!("x509: certificate is not valid for any names, but wanted to match {host}");
    }
    format!("x509: certificate is valid for {valid}, not {host}")
}

/// The error client-go's REST client makes of a non-2xx answer with
/// `content_type` (None when it had none): the answer's own Status when it
/// is a failed one, else a generic text by the status code
/// (k8s.io/apimachinery's `NewGenericServerResponse`), quoting the body's
/// first 2048 bytes when it is text (`isTextResponse`: no content type, or
/// any `text/` one).
pub fn response_error(code: u16, content_type: Option<&str>, body: &[u8]) -> String {
    if let Ok(status) = serde_json::from_slice::<Value>(body)
        && status["kind"] == "Status"
        && status["status"] == "Failure"
    {
        return status["message"].as_str().unwrap_or_default().to_owned();
    }
    let text = content_type.is_none_or(|t| {
        let media = t.split(';').next().unwrap_or_default().trim();
        media.to_ascii_lowercase().starts_with("text/")
    });
    let server_message = if text {
        let cut = &body[..body.len().min(2048)];
        String::from_utf8_lossy(cut).trim().to_owned()
    } else {
        "unknown".to_owned()
    };
    match code {
        409 => "the server reported a conflict".to_owned(),
        404 => "the server could not find the requested resource".to_owned(),
        400 => "the server rejected our request for an unknown reason".to_owned(),
        401 => "the server has asked for the client to provide credentials".to_owned(),
        403 | 415 => server_message,
        406 if server_message.is_empty() || server_message == "unknown" => {
            "the server was unable to respond with a content type that the client supports"
                .to_owned()
        }
        406 => server_message,
        405 => "the server does not allow this method on the requested resource".to_owned(),
        422 => "the server rejected our request due to an error in our request".to_owned(),
        503 => "the server is currently unable to handle the request".to_owned(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the request".to_owned(),
        429 => "the server has received too many requests and has asked us to try again later"
            .to_owned(),
        code if code >= 500 => format!(
            "an error on the server ({}) has prevented the request from succeeding",
            go_quote(&server_message)
        ),
        code => format!(
            "the server responded with the status code {code} but did not return more information"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_that_are_not_2xx_are_worded_as_client_go() {
        assert_eq!(
            response_error(500, Some("text/plain; charset=utf-8"), b"boom\n"),
            "an error on the server (\"boom\") has prevented the request from succeeding"
        );
        assert_eq!(
            response_error(500, Some("application/json"), b"{}"),
            "an error on the server (\"unknown\") has prevented the request from succeeding"
        );
        assert_eq!(
            response_error(404, Some("text/plain"), b"404 page not found"),
            "the server could not find the requested resource"
        );
        assert_eq!(
            response_error(
                400,
                Some("application/json"),
                br#"{"kind":"Status","status":"Failure","message":"no"}"#
            ),
            "no"
        );
        assert_eq!(
            response_error(418, Some("text/plain"), b""),
            "the server responded with the status code 418 but did not return more information"
        );
        // No content type, or any text one, is text to client-go.
        assert_eq!(
            response_error(502, None, b"  bad gateway "),
            "an error on the server (\"bad gateway\") has prevented the request from succeeding"
        );
        assert_eq!(
            response_error(500, Some("text/html"), b"<p>x</p>"),
            "an error on the server (\"<p>x</p>\") has prevented the request from succeeding"
        );
    }

    #[test]
    fn wrong_names_are_worded_as_go() {
        let presented = vec![
            "DnsName(\"converter.default.svc\")".to_owned(),
            "IpAddress(127.0.0.1)".to_owned(),
        ];
        assert_eq!(
            hostname_error("hook.ns.svc", &presented),
            "x509: certificate is valid for converter.default.svc, not hook.ns.svc"
        );
        assert_eq!(
            hostname_error("127.0.0.2", &presented),
            "x509: certificate is valid for 127.0.0.1, not 127.0.0.2"
        );
        assert_eq!(
            hostname_error("127.0.0.2", &presented[..1]),
            "x509: cannot validate certificate for 127.0.0.2 because it doesn't contain any IP SANs"
        );
        assert_eq!(
            hostname_error("a.svc", &[]),
            "x509: certificate is not valid for any names, but wanted to match a.svc"
        );
    }

    #[test]
    fn a_bundle_trusts_its_leaf_certificates_as_go_does() {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf_key = KeyPair::generate().unwrap();
        let leaf = CertificateParams::new(vec!["webhook.default.svc".to_owned()])
            .unwrap()
            .signed_by(&leaf_key, &issuer)
            .unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verify = |bundle: &str, name: &str| {
            let verifier = bundle_verifier(bundle.as_bytes(), &provider).unwrap();
            verifier
                .verify_server_cert(
                    leaf.der(),
                    &[],
                    &ServerName::try_from(name.to_owned()).unwrap(),
                    &[],
                    rustls::pki_types::UnixTime::now(),
                )
                .map(drop)
        };
        // The CA, as usual; the leaf itself, as Go's pool takes it.
        assert!(verify(&ca.pem(), "webhook.default.svc").is_ok());
        assert!(verify(&leaf.pem(), "webhook.default.svc").is_ok());
        // The leaf is still checked for its name.
        assert!(verify(&leaf.pem(), "other.default.svc").is_err());
        // Another certificate trusts neither.
        let other_key = KeyPair::generate().unwrap();
        let other = CertificateParams::new(vec!["x".to_owned()])
            .unwrap()
            .self_signed(&other_key)
            .unwrap();
        assert!(verify(&other.pem(), "webhook.default.svc").is_err());
    }

    #[test]
    fn paths_are_cleaned_as_client_go_cleans_them() {
        assert_eq!(clean_path(""), "/");
        assert_eq!(clean_path("//mutate-v1-pod"), "/mutate-v1-pod");
        assert_eq!(clean_path("/a/./b/../c/"), "/a/c");
        assert_eq!(clean_path("/validate"), "/validate");
    }

    #[test]
    fn targets_name_what_upstream_names() {
        let service = Target::new(&Config {
            service: Some(ServiceRef {
                namespace: "ns".into(),
                name: "hook".into(),
                path: Some("/mutate".into()),
                port: None,
            }),
            ..Config::default()
        })
        .unwrap();
        assert_eq!(service.server_name, "hook.ns.svc");
        assert_eq!(
            service.url("timeout=10s"),
            "https://hook.ns.svc:443/mutate?timeout=10s"
        );
        let url = Target::new(&Config {
            url: Some("https://127.0.0.1:8443/validate".into()),
            ..Config::default()
        })
        .unwrap();
        assert_eq!(
            url.url("timeout=1s"),
            "https://127.0.0.1:8443/validate?timeout=1s"
        );
        assert_eq!(
            Target::new(&Config::default()).unwrap_err(),
            "webhook configuration must have either service or URL"
        );
    }
}
