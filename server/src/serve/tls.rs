//! The TLS side of the listener: rustls on the ring provider, HTTP/2 and
//! HTTP/1.1 offered by ALPN (`h2` first, as Go's server), and a client
//! certificate asked for but not required.
//!
//! The handshake accepts any client certificate whose key the client proves
//! it holds; whether the certificate chains to a client CA is the x509
//! authenticator's question (`authn::x509`), asked on the connection's first
//! request, so a bad certificate gets kube-apiserver's 401 rather than a TLS
//! alert. The handshake still names the client CAs in its certificate
//! request: Go clients send a certificate only when its issuer is among them.

use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, ServerConfig, SignatureScheme};

use crate::authn::x509::ClientCertificates;
use crate::pki::Certificates;

/// The server configuration: `certificates`' serving chain, and client
/// certificates asked for with the CA names of `trusted`.
pub fn server_config(
    certificates: &Certificates,
    trusted: Option<&ClientCertificates>,
) -> Result<Arc<ServerConfig>, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder =
        ServerConfig::builder_with_provider(provider).with_safe_default_protocol_versions()?;
    let builder = match trusted {
        Some(trusted) => builder.with_client_cert_verifier(Arc::new(AskForCertificate {
            trusted: trusted.verifier(),
        })),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(
        certificates.serving_chain.clone(),
        certificates.serving_key.clone_key(),
    )?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Asks for a client certificate, takes any, and checks only that the client
/// holds its key (see the module docs).
#[derive(Debug)]
struct AskForCertificate {
    trusted: Arc<dyn ClientCertVerifier>,
}

impl ClientCertVerifier for AskForCertificate {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.trusted.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.trusted.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.trusted.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.trusted.supported_verify_schemes()
    }
}
