//! A client of another HTTPS server, as client-go's transport reaches one:
//! TLS to a given name (`<service>.<namespace>.svc` for an APIService, the
//! host of a kubeconfig's server), the server's certificate checked against
//! given CAs (an APIService's `caBundle`, a kubeconfig's
//! `certificate-authority-data`) or not at all, a client certificate
//! presented (kapi's front-proxy one, a kubeconfig user's), and connections
//! kept open for the next request.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use hyper::Uri;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::webhook_client::{dial_error, join_host_port, tls_error};

/// Go's dialer timeout in client-go's transport.
const DIAL_TIMEOUT: Duration = Duration::from_secs(30);
/// client-go's `TLSHandshakeTimeout`.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Go's `IdleConnTimeout` as client-go sets it.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The client certificate the aggregator presents (`--proxy-client-cert-file`
/// and `--proxy-client-key-file`, or the one kapi made).
#[derive(Clone, Debug)]
pub struct Identity {
    /// The certificate chain, PEM.
    pub cert_pem: String,
    /// The private key, PEM.
    pub key_pem: String,
}

/// How an APIService's server is trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trust {
    /// `spec.caBundle`: PEM certificates the server's must chain to.
    pub ca_bundle: Vec<u8>,
    /// `spec.insecureSkipTLSVerify`.
    pub insecure: bool,
}

/// One APIService's transport: its TLS settings and idle connections.
#[derive(Clone)]
pub struct Transport {
    tls: Arc<rustls::ClientConfig>,
    server_name: ServerName<'static>,
    client: Client<Connector, Body>,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

impl Transport {
    /// The transport to the server named `server_name`; `Err` is why it
    /// cannot be built (a key that does not parse), as upstream keeps it
    /// and answers every request with it.
    pub fn new(
        server_name: &str,
        trust: &Trust,
        identity: Option<&Identity>,
    ) -> Result<Transport, String> {
        let server_name =
            ServerName::try_from(server_name.to_owned()).map_err(|e| e.to_string())?;
        let tls = Arc::new(tls_config(trust, identity, &[b"http/1.1"])?);
        let connector = Connector {
            tls: tokio_rustls::TlsConnector::from(tls.clone()),
            server_name: server_name.clone(),
        };
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(IDLE_TIMEOUT)
            .pool_timer(TokioTimer::new())
            .build(connector);
        Ok(Transport {
            tls,
            server_name,
            client,
        })
    }

    /// Sends `request` (its URI absolute: `https://host:port/path?query`).
    pub async fn send(
        &self,
        request: hyper::Request<Body>,
    ) -> Result<hyper::Response<hyper::body::Incoming>, String> {
        self.client.request(request).await.map_err(|e| {
            use std::error::Error;
            // The connector's own words (a dial or TLS failure), else
            // hyper's.
            let mut source: Option<&dyn Error> = e.source();
            while let Some(inner) = source {
                if let Some(io) = inner.downcast_ref::<std::io::Error>()
                    && let Some(text) = io.get_ref().and_then(|t| t.downcast_ref::<Worded>())
                {
                    return text.0.clone();
                }
                source = inner.source();
            }
            e.to_string()
        })
    }

    /// A new connection of its own to `host:port`, for an upgrade (which
    /// keeps the connection to itself once switched).
    pub async fn dial(&self, host: &str, port: u16) -> Result<TlsStream<TcpStream>, String> {
        let connector = tokio_rustls::TlsConnector::from(self.tls.clone());
        connect(&connector, &self.server_name, host, port).await
    }
}

/// A failure already worded as Go's net and crypto/tls word it.
#[derive(Debug)]
struct Worded(String);

impl std::fmt::Display for Worded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Worded {}

async fn connect(
    connector: &tokio_rustls::TlsConnector,
    server_name: &ServerName<'static>,
    host: &str,
    port: u16,
) -> Result<TlsStream<TcpStream>, String> {
    let address = join_host_port(host, port);
    let tcp = match tokio::time::timeout(DIAL_TIMEOUT, TcpStream::connect((host, port))).await {
        Ok(Ok(tcp)) => tcp,
        Ok(Err(e)) => return Err(format!("dial tcp {address}: {}", dial_error(&e))),
        Err(_) => return Err(format!("dial tcp {address}: i/o timeout")),
    };
    let _ = tcp.set_nodelay(true);
    match tokio::time::timeout(
        HANDSHAKE_TIMEOUT,
        connector.connect(server_name.clone(), tcp),
    )
    .await
    {
        Ok(Ok(tls)) => Ok(tls),
        Ok(Err(e)) => Err(tls_error(&e, &server_name.to_str())),
        Err(_) => Err("net/http: TLS handshake timeout".to_owned()),
    }
}

/// The TLS settings: the trust, the identity and the protocols offered.
fn tls_config(
    trust: &Trust,
    identity: Option<&Identity>,
    protocols: &[&[u8]],
) -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = if trust.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(provider)))
    } else {
        if trust.ca_bundle.is_empty() {
            builder.with_root_certificates(rustls::RootCertStore::empty())
        } else {
            // CAs given that do not parse are an error (client-go's words),
            // not an empty trust.
            let verifier = crate::webhook_client::bundle_verifier(&trust.ca_bundle, &provider)
                .ok_or_else(|| {
                    "unable to load root certificates: unable to parse bytes as PEM block"
                        .to_owned()
                })?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(verifier)
        }
    };
    let mut config = match identity {
        Some(identity) => {
            let chain: Vec<CertificateDer<'static>> =
                CertificateDer::pem_slice_iter(identity.cert_pem.as_bytes())
                    .collect::<Result<_, _>>()
                    .map_err(|e| {
                        format!("tls: failed to find any PEM data in certificate input: {e}")
                    })?;
            let key = PrivateKeyDer::from_pem_slice(identity.key_pem.as_bytes())
                .map_err(|e| format!("tls: failed to find any PEM data in key input: {e}"))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("tls: {e}"))?
        }
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = protocols.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

/// `insecureSkipTLSVerify`: any certificate is taken, its signatures still
/// checked as TLS requires.
#[derive(Debug)]
struct Unchecked(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Dials the URI's host and port and speaks TLS to the fixed server name.
#[derive(Clone)]
struct Connector {
    tls: tokio_rustls::TlsConnector,
    server_name: ServerName<'static>,
}

impl tower::Service<Uri> for Connector {
    type Response = TlsConnection;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<TlsConnection, std::io::Error>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connector = self.clone();
        Box::pin(async move {
            let host = uri
                .host()
                .unwrap_or_default()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned();
            let port = uri.port_u16().unwrap_or(443);
            connect(&connector.tls, &connector.server_name, &host, port)
                .await
                .map(|tls| TlsConnection(TokioIo::new(tls)))
                .map_err(|text| std::io::Error::other(Worded(text)))
        })
    }
}

/// A TLS connection as hyper's pooled client takes it.
pub struct TlsConnection(TokioIo<TlsStream<TcpStream>>);

impl Connection for TlsConnection {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl hyper::rt::Read for TlsConnection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for TlsConnection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }
}
