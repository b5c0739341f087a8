//! TLS to the servers this process started: each is trusted and spoken to
//! as the kubeconfig it wrote says (its CA, its admin client certificate),
//! unless the request brings its own credentials. The raw HTTP
//! helpers take a bare address, so the settings are kept here by address; an
//! address not kept (an etcd member, say) is spoken to in plain HTTP.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

/// The settings kept for one server: with and without the admin certificate.
type Kept = (Arc<ClientConfig>, Arc<ClientConfig>);

fn servers() -> &'static Mutex<HashMap<SocketAddr, Kept>> {
    static SERVERS: OnceLock<Mutex<HashMap<SocketAddr, Kept>>> = OnceLock::new();
    SERVERS.get_or_init(Default::default)
}

/// Who a connection is: the admin of the kubeconfig, or no one (the
/// request's own `Authorization` header, or anonymous).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Identity {
    /// The admin client certificate (`O=system:masters`).
    Admin,
    /// No client certificate. A request with its own token needs this:
    /// kube-apiserver tries a certificate before a token.
    NoCertificate,
}

/// The client settings of the kubeconfig a server wrote in `data_dir`: the
/// CA it names trusted (else none), its client certificate presented when
/// `identity` is the admin and it has one, `alpn` offered.
pub fn client_config(data_dir: &Path, identity: Identity, alpn: &[&[u8]]) -> Arc<ClientConfig> {
    let kubeconfig =
        std::fs::read_to_string(data_dir.join("kubeconfig")).expect("the server's kubeconfig");
    let field = |name: &str| {
        kubeconfig.lines().find_map(|line| -> Option<Vec<u8>> {
            let value = line.trim().strip_prefix(name)?.strip_prefix(':')?.trim();
            base64::Engine::decode(&base64::engine::general_purpose::STANDARD, value).ok()
        })
    };
    let mut roots = RootCertStore::empty();
    if let Some(ca) = field("certificate-authority-data") {
        for ca in CertificateDer::pem_slice_iter(&ca) {
            roots.add(ca.expect("CA certificate")).expect("trusted CA");
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots);
    let admin = field("client-certificate-data").zip(field("client-key-data"));
    let mut config = match (identity, admin) {
        (Identity::Admin, Some((cert, key))) => {
            let chain: Vec<_> = CertificateDer::pem_slice_iter(&cert)
                .map(|c| c.expect("admin certificate"))
                .collect();
            let key = PrivateKeyDer::from_pem_slice(&key).expect("admin key");
            builder
                .with_client_auth_cert(chain, key)
                .expect("client certificate")
        }
        _ => builder.with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

/// Keeps the settings of the server at `address`, whose kubeconfig is in
/// `data_dir` (done for every [`crate::Server`]; a server a test runs in its
/// own process calls it once the kubeconfig is written).
pub fn remember(address: SocketAddr, data_dir: &Path) {
    let admin = client_config(data_dir, Identity::Admin, &[b"http/1.1"]);
    let plain = client_config(data_dir, Identity::NoCertificate, &[b"http/1.1"]);
    servers()
        .lock()
        .expect("servers")
        .insert(address, (admin, plain));
}

/// Forgets the server at `address`.
pub fn forget(address: SocketAddr) {
    servers().lock().expect("servers").remove(&address);
}

/// A connection to a server: TLS to the servers started here, plain TCP
/// elsewhere.
pub enum Stream {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS over TCP.
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    /// Connects to `address` (within 2 s) as the admin, with TLS and the
    /// settings kept for it, offering `alpn` instead of HTTP/1.1 when given.
    pub fn connect(address: SocketAddr, alpn: Option<&[&[u8]]>) -> std::io::Result<Stream> {
        Stream::connect_as(address, Identity::Admin, alpn)
    }

    /// [`Stream::connect`] as `identity`.
    pub fn connect_as(
        address: SocketAddr,
        identity: Identity,
        alpn: Option<&[&[u8]]>,
    ) -> std::io::Result<Stream> {
        let tcp = TcpStream::connect_timeout(&address, Duration::from_secs(2))?;
        let kept = servers().lock().expect("servers").get(&address).cloned();
        let Some((admin, plain)) = kept else {
            return Ok(Stream::Plain(tcp));
        };
        let mut config = match identity {
            Identity::Admin => admin,
            Identity::NoCertificate => plain,
        };
        if let Some(alpn) = alpn {
            let mut changed = (*config).clone();
            changed.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
            config = Arc::new(changed);
        }
        let name = ServerName::IpAddress(address.ip().into());
        let connection = ClientConnection::new(config, name).map_err(std::io::Error::other)?;
        let mut stream = StreamOwned::new(connection, tcp);
        // Finish the handshake now, so a refused connection fails here.
        while stream.conn.is_handshaking() {
            stream
                .conn
                .complete_io(&mut stream.sock)
                .map_err(std::io::Error::other)?;
        }
        Ok(Stream::Tls(Box::new(stream)))
    }

    /// The protocol the server chose by ALPN.
    pub fn alpn_protocol(&self) -> Option<&[u8]> {
        match self {
            Stream::Plain(_) => None,
            Stream::Tls(tls) => tls.conn.alpn_protocol(),
        }
    }

    /// The TCP socket underneath.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(tcp) => tcp,
            Stream::Tls(tls) => &tls.sock,
        }
    }

    /// Bounds every read.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        self.tcp().set_read_timeout(timeout)
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.read(buf),
            Stream::Tls(tls) => match tls.read(buf) {
                // A server that closes without close_notify (as Go's does on
                // `Connection: close`) has still sent everything.
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(0),
                other => other,
            },
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.write(buf),
            Stream::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(tcp) => tcp.flush(),
            Stream::Tls(tls) => tls.flush(),
        }
    }
}
