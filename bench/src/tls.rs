//! TLS client settings for `https://` servers: trust a CA file (`--ca-file`), or
//! accept whatever certificate the server shows (`--insecure`, for the reference
//! kube-apiserver's self-signed CA when its file is not at hand).

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// How the server's certificate is checked.
pub enum Trust<'a> {
    /// Any certificate is accepted (the handshake's signatures are still verified).
    Insecure,
    /// Certificates must chain to one of the CAs in this PEM file.
    CaFile(&'a Path),
}

/// A rustls client configuration on the ring provider, offering `alpn` (e.g.
/// `h2` or `http/1.1`) to the server.
pub fn client_config(trust: Trust<'_>, alpn: &[&[u8]]) -> Result<Arc<ClientConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?;
    let mut config = match trust {
        Trust::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate {
                algorithms: provider.signature_verification_algorithms,
            }))
            .with_no_client_auth(),
        Trust::CaFile(path) => builder
            .with_root_certificates(roots(path)?)
            .with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// The CA certificates of a PEM file.
fn roots(path: &Path) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    let certificates = CertificateDer::pem_file_iter(path)
        .with_context(|| format!("reading CA file {}", path.display()))?;
    for certificate in certificates {
        let certificate =
            certificate.with_context(|| format!("parsing CA file {}", path.display()))?;
        roots
            .add(certificate)
            .with_context(|| format!("adding a CA of {}", path.display()))?;
    }
    if roots.is_empty() {
        bail!("no certificate in CA file {}", path.display());
    }
    Ok(roots)
}

/// `--insecure`: the certificate itself is not checked, only that the server holds
/// its key (the handshake signatures), as `curl -k` does.
#[derive(Debug)]
struct AcceptAnyCertificate {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for AcceptAnyCertificate {
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
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
