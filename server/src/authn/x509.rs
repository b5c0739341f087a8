//! Client certificates: a certificate that chains to a client CA
//! (`--client-ca-file`, or kapi's own CA) names its user by its subject's
//! common name and its groups by the subject's organizations, as
//! kube-apiserver's x509 authenticator.
//!
//! The TLS handshake accepts any certificate whose key the client proves it
//! holds (`serve::tls`); the chain is verified here, on the connection's
//! first request, as kube-apiserver verifies it in its authenticator rather
//! than in the handshake. So a certificate of another CA, or one that has
//! expired, is answered with a 401 Status (or ignored when the request also
//! carries a good token) instead of a TLS alert.

use std::sync::{Arc, OnceLock};

use rustls::RootCertStore;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::ClientCertVerifier;
use sha2::Digest;

use crate::user::{UserInfo, add_authenticated};

/// The CAs client certificates are verified against.
#[derive(Debug)]
pub struct ClientCertificates {
    verifier: Arc<dyn ClientCertVerifier>,
}

/// Why a client certificate authenticates no one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused(pub String);

impl ClientCertificates {
    /// Trusts client certificates issued by `cas`.
    pub fn new(cas: &[CertificateDer<'static>]) -> Result<ClientCertificates, rustls::Error> {
        let mut roots = RootCertStore::empty();
        for ca in cas {
            roots
                .add(ca.clone())
                .map_err(|e| rustls::Error::General(format!("client CA: {e}")))?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .allow_unauthenticated()
            .build()
            .map_err(|e| rustls::Error::General(format!("client CA: {e}")))?;
        Ok(ClientCertificates { verifier })
    }

    /// The verifier of the CAs, whose signature checks and CA names the
    /// handshake uses.
    pub fn verifier(&self) -> Arc<dyn ClientCertVerifier> {
        self.verifier.clone()
    }

    /// The user of a verified `chain` (leaf first) and when the leaf ends (Unix
    /// seconds); `Ok(None)` for a certificate without a common name, which
    /// upstream does not count as a credential.
    pub fn user(&self, chain: &[CertificateDer<'static>], now: UnixTime) -> Verified {
        let Some((leaf, intermediates)) = chain.split_first() else {
            return Ok(None);
        };
        self.verifier
            .verify_client_cert(leaf, intermediates, now)
            .map_err(|e| Refused(format!("verifying certificate: {e}")))?;
        let (_, cert) = x509_parser::parse_x509_certificate(leaf)
            .map_err(|e| Refused(format!("parsing certificate: {e}")))?;
        let subject = cert.subject();
        let Some(name) = subject
            .iter_common_name()
            .next()
            .and_then(|cn| cn.as_str().ok())
            .filter(|cn| !cn.is_empty())
        else {
            return Ok(None);
        };
        let groups = subject
            .iter_organization()
            .filter_map(|o| o.as_str().ok())
            .map(str::to_owned)
            .collect();
        // Since 1.32 the certificate's fingerprint names the credential.
        let fingerprint: String = sha2::Sha256::digest(leaf.as_ref())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let mut user = UserInfo {
            name: name.to_owned(),
            groups,
            extra: [(
                crate::user::CREDENTIAL_ID.to_owned(),
                vec![format!("X509SHA256={fingerprint}")],
            )]
            .into(),
            ..UserInfo::default()
        };
        add_authenticated(&mut user);
        let ends = u64::try_from(cert.validity().not_after.timestamp()).unwrap_or(0);
        Ok(Some((Arc::new(user), ends)))
    }
}

/// A verified certificate's user and when the certificate ends (Unix
/// seconds); `None` for one that names no user.
type Verified = Result<Option<(Arc<UserInfo>, u64)>, Refused>;

/// The certificate chain a connection's client presented, authenticated on
/// the connection's first request and remembered for the rest.
#[derive(Debug)]
pub struct PeerCertificates {
    chain: Vec<CertificateDer<'static>>,
    verified: OnceLock<Verified>,
    /// The same against the front proxies' CAs.
    proxy: OnceLock<Verified>,
}

impl PeerCertificates {
    /// The chain of a finished handshake (leaf first).
    pub fn new(chain: Vec<CertificateDer<'static>>) -> PeerCertificates {
        PeerCertificates {
            chain,
            verified: OnceLock::new(),
            proxy: OnceLock::new(),
        }
    }

    /// [`PeerCertificates::user`] against the front proxies' CAs (the
    /// proxy's own name).
    pub fn proxy(&self, trusted: &ClientCertificates) -> Result<Option<Arc<UserInfo>>, Refused> {
        let now = UnixTime::now();
        match self.proxy.get_or_init(|| trusted.user(&self.chain, now)) {
            Ok(Some((user, ends))) if now.as_secs() <= *ends => Ok(Some(user.clone())),
            Ok(Some(_)) => Err(Refused("the certificate has expired".to_owned())),
            Ok(None) => Ok(None),
            Err(refused) => Err(refused.clone()),
        }
    }

    /// The user of the chain, verified once; a certificate that has ended
    /// since is refused.
    pub fn user(&self, trusted: &ClientCertificates) -> Result<Option<Arc<UserInfo>>, Refused> {
        let now = UnixTime::now();
        match self.verified.get_or_init(|| trusted.user(&self.chain, now)) {
            Ok(Some((user, ends))) if now.as_secs() <= *ends => Ok(Some(user.clone())),
            Ok(Some(_)) => Err(Refused("the certificate has expired".to_owned())),
            Ok(None) => Ok(None),
            Err(refused) => Err(refused.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pki::{self, Reachable, TlsFlags};
    use rustls::pki_types::pem::PemObject;

    #[test]
    fn a_certificate_of_the_ca_names_its_user_and_groups() {
        let dir = tempfile::tempdir().unwrap();
        let at = Reachable {
            listen: [127, 0, 0, 1].into(),
            service_ip: [10, 96, 0, 1].into(),
        };
        let made = pki::load(dir.path(), &TlsFlags::default(), &at).unwrap();
        let trusted = ClientCertificates::new(&made.client_cas).unwrap();
        let admin = made.admin.unwrap();
        let leaf = CertificateDer::from_pem_slice(admin.cert_pem.as_bytes()).unwrap();
        let peer = PeerCertificates::new(vec![leaf.clone()]);
        let user = peer.user(&trusted).unwrap().unwrap();
        assert_eq!(user.name, pki::ADMIN_USER);
        assert_eq!(
            user.groups,
            [crate::user::MASTERS, crate::user::AUTHENTICATED]
        );
        let id = &user.extra[crate::user::CREDENTIAL_ID];
        assert!(
            id[0].starts_with("X509SHA256=") && id[0].len() == 11 + 64,
            "{id:?}"
        );

        // Another CA's certificate is refused, as is a serving certificate
        // (no client usage) and one checked after it ended.
        let other = tempfile::tempdir().unwrap();
        let elsewhere = pki::load(other.path(), &TlsFlags::default(), &at).unwrap();
        let foreign = elsewhere.admin.unwrap();
        let foreign = CertificateDer::from_pem_slice(foreign.cert_pem.as_bytes()).unwrap();
        assert!(PeerCertificates::new(vec![foreign]).user(&trusted).is_err());
        let serving = made.serving_chain[0].clone();
        assert!(PeerCertificates::new(vec![serving]).user(&trusted).is_err());
        let later = UnixTime::since_unix_epoch(std::time::Duration::from_secs(4_000_000_000));
        assert!(trusted.user(&[leaf], later).is_err());
        assert_eq!(PeerCertificates::new(vec![]).user(&trusted), Ok(None));
    }
}
