//! The certificates kapi serves with, kept in the data directory.
//!
//! On first start kapi makes a cluster CA (`ca.crt`, `ca.key`: ECDSA P-256,
//! ten years, as kubeadm's) and an admin client certificate signed by it
//! (`admin.crt`, `admin.key`: `CN=kapi-admin`, `O=system:masters`, one year,
//! renewed on a start within 30 days of its end), and the client
//! certificates of kube-controller-manager and kube-scheduler
//! (`controller-manager.crt`/`.key`: `CN=system:kube-controller-manager`;
//! `scheduler.crt`/`.key`: `CN=system:kube-scheduler`; no group, so only
//! upstream's bootstrap roles for those users apply), as kubeadm makes them
//! for `controller-manager.conf` and `scheduler.conf`. On every start it signs a
//! serving certificate (`apiserver.crt`, `apiserver.key`) for the names
//! clients reach it by: `localhost`, `kubernetes`, `kubernetes.default`,
//! `kubernetes.default.svc`, `kubernetes.default.svc.cluster.local`,
//! 127.0.0.1, ::1, the listen address, the `kubernetes` Service's ClusterIP and
//! every `--tls-san`. Signing it again each time keeps it current with the
//! flags at the cost of one signature (well under a millisecond).
//!
//! For the aggregator, kapi makes a front-proxy CA (`front-proxy-ca.crt`,
//! `front-proxy-ca.key`) and the client certificate it presents to
//! extension API servers (`front-proxy-client.crt`/`.key`:
//! `CN=front-proxy-client`), kubeadm's names; `--proxy-client-cert-file` with
//! `--proxy-client-key-file` present another one, and
//! `--requestheader-client-ca-file` names the CA extension servers are told
//! to trust for it.
//!
//! kube-apiserver's flags replace the parts made here: `--tls-cert-file` with
//! `--tls-private-key-file` serve another certificate; `--client-ca-file`
//! trusts other client certificates (the admin certificate is then not
//! written, since kapi's CA no longer signs accepted ones).

use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use jiff::ToSpan;
use jiff::civil::Date;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType, SerialNumber,
};
use ring::rand::{SecureRandom, SystemRandom};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The file name of the CA certificate in the data directory.
pub const CA_CERT_FILE: &str = "ca.crt";
/// The file name of its private key.
pub const CA_KEY_FILE: &str = "ca.key";
/// The serving certificate.
pub const SERVING_CERT_FILE: &str = "apiserver.crt";
/// Its key.
pub const SERVING_KEY_FILE: &str = "apiserver.key";
/// The front-proxy CA.
pub const FRONT_PROXY_CA_CERT_FILE: &str = "front-proxy-ca.crt";
/// Its key.
pub const FRONT_PROXY_CA_KEY_FILE: &str = "front-proxy-ca.key";
/// The front-proxy CA's common name (kubeadm's).
const FRONT_PROXY_CA_COMMON_NAME: &str = "front-proxy-ca";
/// The client certificate kapi presents to extension API servers, as
/// kubeadm makes it.
pub const FRONT_PROXY_CLIENT: Identity = Identity {
    file: "front-proxy-client",
    user: "front-proxy-client",
    groups: &[],
};
/// The admin client certificate the kubeconfig carries.
pub const ADMIN_CERT_FILE: &str = "admin.crt";
/// Its key.
pub const ADMIN_KEY_FILE: &str = "admin.key";

/// A client identity kapi makes a certificate (and a kubeconfig) for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The certificate's file name without its extension (`.crt`, and
    /// `.key` for its key), and the kubeconfig's (`.conf`; the admin's is
    /// `kubeconfig`).
    pub file: &'static str,
    /// The user (the certificate's common name).
    pub user: &'static str,
    /// The groups (its organizations).
    pub groups: &'static [&'static str],
}

/// The administrator: anything goes.
pub const ADMIN: Identity = Identity {
    file: "admin",
    user: ADMIN_USER,
    groups: &[crate::user::MASTERS],
};

/// kube-controller-manager and kube-scheduler, as kubeadm identifies them.
pub const COMPONENTS: [Identity; 2] = [
    Identity {
        file: "controller-manager",
        user: "system:kube-controller-manager",
        groups: &[],
    },
    Identity {
        file: "scheduler",
        user: "system:kube-scheduler",
        groups: &[],
    },
];

/// The CA's common name.
const CA_COMMON_NAME: &str = "kapi-ca";
/// The admin certificate's user.
pub const ADMIN_USER: &str = "kapi-admin";
/// The DNS names every serving certificate holds (kubeadm's, plus localhost).
const SERVING_DNS_NAMES: &[&str] = &[
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
];
/// A new leaf certificate is renewed when it ends within this many days.
const RENEW_DAYS: i64 = 30;

/// The flags that replace what kapi makes.
#[derive(Clone, Debug, Default)]
pub struct TlsFlags {
    /// `--tls-cert-file`: the serving certificate chain (PEM).
    pub cert_file: Option<PathBuf>,
    /// `--tls-private-key-file`: its key.
    pub key_file: Option<PathBuf>,
    /// `--client-ca-file`: CAs whose client certificates authenticate users.
    pub client_ca_file: Option<PathBuf>,
    /// `--tls-sans`: further names of the serving certificate kapi makes.
    pub sans: Vec<String>,
    /// `--proxy-client-cert-file`: the client certificate presented to
    /// extension API servers.
    pub proxy_client_cert_file: Option<PathBuf>,
    /// `--proxy-client-key-file`: its key.
    pub proxy_client_key_file: Option<PathBuf>,
    /// `--requestheader-client-ca-file`: the CA of front proxies' client
    /// certificates.
    pub requestheader_client_ca_file: Option<PathBuf>,
    /// `--requestheader-allowed-names`, `--requestheader-username-headers`,
    /// `--requestheader-group-headers` and
    /// `--requestheader-extra-headers-prefix` (kubeadm's values when none
    /// is given).
    pub requestheader_allowed_names: Vec<String>,
    pub requestheader_username_headers: Vec<String>,
    pub requestheader_group_headers: Vec<String>,
    pub requestheader_extra_headers_prefix: Vec<String>,
}

/// Where clients reach the server: what the serving certificate must name.
#[derive(Clone, Debug)]
pub struct Reachable {
    /// The listen address (unless it is unspecified, 0.0.0.0 or ::).
    pub listen: IpAddr,
    /// The `kubernetes` Service's ClusterIP.
    pub service_ip: IpAddr,
}

/// What kapi serves and trusts.
pub struct Certificates {
    /// The serving chain, leaf first.
    pub serving_chain: Vec<CertificateDer<'static>>,
    /// The serving key.
    pub serving_key: PrivateKeyDer<'static>,
    /// The CAs of client certificates.
    pub client_cas: Vec<CertificateDer<'static>>,
    /// The CA (PEM) clients trust for the serving certificate: kapi's own,
    /// or with `--tls-cert-file` the last certificate of that chain when it
    /// is self-signed (a chain that ends below its root says nothing of it).
    pub serving_ca_pem: Option<String>,
    /// kapi's own CA (PEM), published as `kube-root-ca.crt` unless
    /// `--root-ca-file` names another.
    pub cluster_ca_pem: String,
    /// The admin client certificate and key (PEM), unless `--client-ca-file`
    /// trusts other CAs.
    pub admin: Option<Credentials>,
    /// The components' certificates (as [`COMPONENTS`]), unless
    /// `--client-ca-file` trusts other CAs.
    pub components: Vec<(Identity, Credentials)>,
    /// What kapi presents to extension API servers, and the CA they are
    /// told to trust for it.
    pub front_proxy: FrontProxy,
}

/// The aggregator's client identity towards extension API servers.
#[derive(Clone, Debug)]
pub struct FrontProxy {
    /// The client certificate and key presented.
    pub client: Credentials,
    /// The CA (PEM) of front-proxy client certificates: the
    /// `requestheader-client-ca-file` of the
    /// `extension-apiserver-authentication` ConfigMap (none when
    /// `--proxy-client-cert-file` is given without
    /// `--requestheader-client-ca-file`).
    pub requestheader_ca_pem: Option<String>,
}

/// A client certificate and its key, PEM.
#[derive(Clone, Debug)]
pub struct Credentials {
    /// The certificate.
    pub cert_pem: String,
    /// The PKCS#8 key.
    pub key_pem: String,
}

/// Why the certificates could not be read or made.
#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    /// A file could not be read or written.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        error: std::io::Error,
    },
    /// A file holds no usable certificate or key.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A certificate could not be made.
    #[error("making a certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// Only one of `--tls-cert-file` and `--tls-private-key-file` was given.
    #[error("--tls-cert-file and --tls-private-key-file must be given together")]
    Pair,
    /// Only one of `--proxy-client-cert-file` and `--proxy-client-key-file`
    /// was given.
    #[error("--proxy-client-cert-file and --proxy-client-key-file must be given together")]
    ProxyPair,
}

/// Reads or makes the certificates of `data_dir` (see the module docs).
pub fn load(data_dir: &Path, flags: &TlsFlags, at: &Reachable) -> Result<Certificates, PkiError> {
    std::fs::create_dir_all(data_dir).map_err(io(data_dir))?;
    let ca = ClusterCa::load_or_create(data_dir, CA_CERT_FILE, CA_KEY_FILE, CA_COMMON_NAME)?;
    let (serving_chain, serving_key, serving_ca_pem) = match (&flags.cert_file, &flags.key_file) {
        (Some(cert), Some(key)) => {
            let chain = read_certificates(cert)?;
            let key = read_key(key)?;
            let root = chain
                .last()
                .filter(|c| self_signed(c))
                .map(|c| pem("CERTIFICATE", c));
            (chain, key, root)
        }
        (None, None) => {
            let (cert, key) = ca.serving(data_dir, &flags.sans, at)?;
            (vec![cert], key, Some(ca.pem.clone()))
        }
        _ => return Err(PkiError::Pair),
    };
    let (client_cas, admin, components) = match &flags.client_ca_file {
        Some(path) => (read_certificates(path)?, None, Vec::new()),
        None => {
            let admin = ca.client(data_dir, ADMIN)?;
            let components = COMPONENTS
                .iter()
                .map(|identity| Ok((*identity, ca.client(data_dir, *identity)?)))
                .collect::<Result<_, PkiError>>()?;
            (vec![ca.der.clone()], Some(admin), components)
        }
    };
    let front_proxy = front_proxy(data_dir, flags)?;
    Ok(Certificates {
        serving_chain,
        serving_key,
        client_cas,
        serving_ca_pem,
        cluster_ca_pem: ca.pem,
        admin,
        components,
        front_proxy,
    })
}

/// The front proxy's client certificate: the flags', or one kapi makes
/// with a front-proxy CA of its own.
fn front_proxy(data_dir: &Path, flags: &TlsFlags) -> Result<FrontProxy, PkiError> {
    let trusted = match &flags.requestheader_client_ca_file {
        Some(path) => Some(read_text(path)?),
        None => None,
    };
    match (&flags.proxy_client_cert_file, &flags.proxy_client_key_file) {
        (Some(cert), Some(key)) => Ok(FrontProxy {
            client: Credentials {
                cert_pem: read_text(cert)?,
                key_pem: read_text(key)?,
            },
            requestheader_ca_pem: trusted,
        }),
        (None, None) => {
            let ca = ClusterCa::load_or_create(
                data_dir,
                FRONT_PROXY_CA_CERT_FILE,
                FRONT_PROXY_CA_KEY_FILE,
                FRONT_PROXY_CA_COMMON_NAME,
            )?;
            let client = ca.client(data_dir, FRONT_PROXY_CLIENT)?;
            Ok(FrontProxy {
                client,
                requestheader_ca_pem: Some(trusted.unwrap_or(ca.pem)),
            })
        }
        _ => Err(PkiError::ProxyPair),
    }
}

/// kapi's CA: its certificate and what signs with it.
struct ClusterCa {
    pem: String,
    der: CertificateDer<'static>,
    issuer: Issuer<'static, KeyPair>,
}

impl ClusterCa {
    /// The CA of `cert_file` and `key_file` in `dir`, made (with
    /// `common_name`) when missing.
    fn load_or_create(
        dir: &Path,
        cert_file: &str,
        key_file: &str,
        common_name: &str,
    ) -> Result<ClusterCa, PkiError> {
        let cert_path = dir.join(cert_file);
        let key_path = dir.join(key_file);
        if cert_path.exists() {
            let pem = read_text(&cert_path)?;
            let key = KeyPair::from_pem(&read_text(&key_path)?).map_err(invalid(&key_path))?;
            let der = first_certificate(&cert_path, &pem)?;
            let issuer = Issuer::from_ca_cert_der(&der, key).map_err(invalid(&cert_path))?;
            return Ok(ClusterCa { pem, der, issuer });
        }
        let key = KeyPair::generate()?;
        let mut params = params(common_name, &[], 10 * 365)?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
        ];
        let cert = params.self_signed(&key)?;
        write_private(&key_path, key.serialize_pem().as_bytes())?;
        // Written last: a crash in between makes a new pair next time.
        let pem = cert.pem();
        std::fs::write(&cert_path, pem.as_bytes()).map_err(io(&cert_path))?;
        let der = cert.der().clone();
        Ok(ClusterCa {
            pem,
            der,
            issuer: Issuer::new(params, key),
        })
    }

    /// A new serving certificate for `sans` and the addresses of `at`.
    fn serving(
        &self,
        dir: &Path,
        sans: &[String],
        at: &Reachable,
    ) -> Result<(CertificateDer<'static>, PrivateKeyDer<'static>), PkiError> {
        let mut names: Vec<SanType> = Vec::new();
        let mut add = |san: SanType| {
            if !names.contains(&san) {
                names.push(san);
            }
        };
        for name in SERVING_DNS_NAMES {
            add(SanType::DnsName((*name).try_into()?));
        }
        let mut ips = vec![
            IpAddr::from([127, 0, 0, 1]),
            IpAddr::from(std::net::Ipv6Addr::LOCALHOST),
            at.service_ip,
        ];
        if !at.listen.is_unspecified() {
            ips.push(at.listen);
        }
        for ip in ips {
            add(SanType::IpAddress(ip));
        }
        for san in sans {
            add(match san.parse::<IpAddr>() {
                Ok(ip) => SanType::IpAddress(ip),
                Err(_) => SanType::DnsName(san.clone().try_into()?),
            });
        }
        let key = KeyPair::generate()?;
        let mut params = params("kapi-apiserver", &[], 365)?;
        params.subject_alt_names = names;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        let cert = params.signed_by(&key, &self.issuer)?;
        let key_pem = key.serialize_pem();
        write_private(&dir.join(SERVING_KEY_FILE), key_pem.as_bytes())?;
        let cert_path = dir.join(SERVING_CERT_FILE);
        std::fs::write(&cert_path, cert.pem()).map_err(io(&cert_path))?;
        let key = PrivateKeyDer::Pkcs8(key.serialize_der().into());
        Ok((cert.der().clone(), key))
    }

    /// The client certificate of `identity` in `dir`, made when missing,
    /// not signed by this CA, or within [`RENEW_DAYS`] of its end.
    fn client(&self, dir: &Path, identity: Identity) -> Result<Credentials, PkiError> {
        let cert_path = dir.join(format!("{}.crt", identity.file));
        let key_path = dir.join(format!("{}.key", identity.file));
        if let (Ok(cert_pem), Ok(key_pem)) = (
            std::fs::read_to_string(&cert_path),
            std::fs::read_to_string(&key_path),
        ) && self.still_good(&cert_pem)
        {
            return Ok(Credentials { cert_pem, key_pem });
        }
        let key = KeyPair::generate()?;
        let mut params = params(identity.user, identity.groups, 365)?;
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.use_authority_key_identifier_extension = true;
        let cert = params.signed_by(&key, &self.issuer)?;
        let credentials = Credentials {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        };
        write_private(&key_path, credentials.key_pem.as_bytes())?;
        std::fs::write(&cert_path, credentials.cert_pem.as_bytes()).map_err(io(&cert_path))?;
        Ok(credentials)
    }

    /// Whether `cert_pem` was issued by this CA and lasts beyond the renewal
    /// window.
    fn still_good(&self, cert_pem: &str) -> bool {
        let Ok(der) = CertificateDer::from_pem_slice(cert_pem.as_bytes()) else {
            return false;
        };
        let Ok((_, cert)) = x509_parser::parse_x509_certificate(&der) else {
            return false;
        };
        let Ok((_, ca)) = x509_parser::parse_x509_certificate(&self.der) else {
            return false;
        };
        let renew_at = jiff::Timestamp::now() + (RENEW_DAYS * 24).hours();
        cert.issuer() == ca.subject()
            && cert.verify_signature(Some(ca.public_key())).is_ok()
            && cert.validity().not_after.timestamp() > renew_at.as_second()
    }
}

/// Whether `der` is a certificate that signed itself.
fn self_signed(der: &CertificateDer<'_>) -> bool {
    x509_parser::parse_x509_certificate(der).is_ok_and(|(_, cert)| {
        cert.subject() == cert.issuer() && cert.verify_signature(None).is_ok()
    })
}

/// Parameters of a certificate for `common_name` in `organizations`, valid
/// from yesterday for `days`, with a random serial number.
fn params(
    common_name: &str,
    organizations: &[&str],
    days: i64,
) -> Result<CertificateParams, PkiError> {
    let mut params = CertificateParams::default();
    let mut name = DistinguishedName::new();
    for organization in organizations {
        name.push(DnType::OrganizationName, *organization);
    }
    name.push(DnType::CommonName, common_name);
    params.distinguished_name = name;
    // Yesterday, so a client whose clock is a little behind accepts it.
    let today = jiff::Zoned::now()
        .with_time_zone(jiff::tz::TimeZone::UTC)
        .date();
    let (year, month, day) = ymd(today - 1.day());
    params.not_before = rcgen::date_time_ymd(year, month, day);
    let (year, month, day) = ymd(today + days.days());
    params.not_after = rcgen::date_time_ymd(year, month, day);
    let mut serial = [0u8; 16];
    SystemRandom::new()
        .fill(&mut serial)
        .map_err(|_| rcgen::Error::RingUnspecified)?;
    serial[0] &= 0x7f;
    params.serial_number = Some(SerialNumber::from_slice(&serial));
    Ok(params)
}

fn ymd(date: Date) -> (i32, u8, u8) {
    (
        i32::from(date.year()),
        date.month().unsigned_abs(),
        date.day().unsigned_abs(),
    )
}

/// The certificates of a PEM file (at least one).
pub fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, PkiError> {
    let text = read_text(path)?;
    let certificates: Vec<_> = CertificateDer::pem_slice_iter(text.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(invalid(path))?;
    if certificates.is_empty() {
        return Err(PkiError::Invalid {
            path: path.display().to_string(),
            message: "no PEM certificate in it".to_owned(),
        });
    }
    Ok(certificates)
}

/// The PEM text of a file that holds at least one certificate
/// (`--root-ca-file`).
pub fn read_pem(path: &Path) -> Result<String, PkiError> {
    read_certificates(path)?;
    read_text(path)
}

fn first_certificate(path: &Path, pem: &str) -> Result<CertificateDer<'static>, PkiError> {
    CertificateDer::from_pem_slice(pem.as_bytes()).map_err(invalid(path))
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, PkiError> {
    PrivateKeyDer::from_pem_slice(read_text(path)?.as_bytes()).map_err(invalid(path))
}

fn read_text(path: &Path) -> Result<String, PkiError> {
    std::fs::read_to_string(path).map_err(io(path))
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> PkiError + '_ {
    move |error| PkiError::Io {
        path: path.display().to_string(),
        error,
    }
}

fn invalid<E: std::fmt::Display>(path: &Path) -> impl Fn(E) -> PkiError + '_ {
    move |e| PkiError::Invalid {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Writes a file readable by its owner only (a key, or a kubeconfig with one).
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), PkiError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(io(path))?;
    // A file from before may have been readable by others.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(io(path))?;
    }
    file.write_all(bytes).map_err(io(path))
}

/// `der` as PEM with `label`.
pub fn pem(label: &str, der: &[u8]) -> String {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(der);
    let mut text = format!("-----BEGIN {label}-----\n");
    for line in encoded.as_bytes().chunks(64) {
        text.push_str(&String::from_utf8_lossy(line));
        text.push('\n');
    }
    text.push_str(&format!("-----END {label}-----\n"));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reachable() -> Reachable {
        Reachable {
            listen: IpAddr::from([192, 0, 2, 7]),
            service_ip: IpAddr::from([10, 96, 0, 1]),
        }
    }

    fn subject_and_names(der: &[u8]) -> (String, Vec<String>) {
        let (_, cert) = x509_parser::parse_x509_certificate(der).unwrap();
        let names = cert
            .subject_alternative_name()
            .unwrap()
            .map(|san| {
                san.value
                    .general_names
                    .iter()
                    .map(|n| n.to_string())
                    .collect()
            })
            .unwrap_or_default();
        (cert.subject().to_string(), names)
    }

    #[test]
    fn first_start_makes_a_ca_a_serving_an_admin_and_the_components_certificates() {
        let dir = tempfile::tempdir().unwrap();
        let flags = TlsFlags {
            sans: vec!["api.example.com".into(), "203.0.113.9".into()],
            ..TlsFlags::default()
        };
        let made = load(dir.path(), &flags, &reachable()).unwrap();
        assert_eq!(made.serving_ca_pem.as_ref(), Some(&made.cluster_ca_pem));
        let (_, names) = subject_and_names(&made.serving_chain[0]);
        for name in [
            "DNSName(localhost)",
            "DNSName(kubernetes.default.svc.cluster.local)",
            "DNSName(api.example.com)",
            // x509-parser shows addresses as hex bytes.
            "IPAddress(7f:00:00:01)",
            "IPAddress(c0:00:02:07)",
            "IPAddress(0a:60:00:01)",
            "IPAddress(cb:00:71:09)",
        ] {
            assert!(names.iter().any(|n| n == name), "{name} not in {names:?}");
        }
        let subjects: Vec<String> = made
            .components
            .iter()
            .map(|(_, made)| {
                let der = CertificateDer::from_pem_slice(made.cert_pem.as_bytes()).unwrap();
                subject_and_names(&der).0
            })
            .collect();
        assert_eq!(
            subjects,
            [
                "CN=system:kube-controller-manager",
                "CN=system:kube-scheduler"
            ]
        );
        let admin = made.admin.unwrap();
        let der = CertificateDer::from_pem_slice(admin.cert_pem.as_bytes()).unwrap();
        let (subject, _) = subject_and_names(&der);
        assert_eq!(subject, "O=system:masters, CN=kapi-admin");

        // A second start keeps the CA and the admin certificate.
        let again = load(dir.path(), &TlsFlags::default(), &reachable()).unwrap();
        assert_eq!(again.cluster_ca_pem, made.cluster_ca_pem);
        assert_eq!(again.admin.unwrap().cert_pem, admin.cert_pem);
        let mode = std::fs::metadata(dir.path().join(ADMIN_KEY_FILE))
            .unwrap()
            .permissions();
        #[cfg(unix)]
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
    }

    #[test]
    fn an_admin_certificate_of_another_ca_is_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let first = load(dir.path(), &TlsFlags::default(), &reachable()).unwrap();
        std::fs::remove_file(dir.path().join(CA_CERT_FILE)).unwrap();
        let second = load(dir.path(), &TlsFlags::default(), &reachable()).unwrap();
        assert_ne!(first.cluster_ca_pem, second.cluster_ca_pem);
        assert_ne!(
            first.admin.unwrap().cert_pem,
            second.admin.unwrap().cert_pem
        );
    }

    #[test]
    fn given_files_replace_what_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let made = load(other.path(), &TlsFlags::default(), &reachable()).unwrap();
        let flags = TlsFlags {
            cert_file: Some(other.path().join(SERVING_CERT_FILE)),
            key_file: Some(other.path().join(SERVING_KEY_FILE)),
            client_ca_file: Some(other.path().join(CA_CERT_FILE)),
            sans: vec![],
            proxy_client_cert_file: Some(other.path().join("front-proxy-client.crt")),
            proxy_client_key_file: Some(other.path().join("front-proxy-client.key")),
            requestheader_client_ca_file: Some(other.path().join(FRONT_PROXY_CA_CERT_FILE)),
            ..TlsFlags::default()
        };
        let used = load(dir.path(), &flags, &reachable()).unwrap();
        // The front proxy's given client certificate and CA, and none made.
        assert_eq!(
            used.front_proxy.client.cert_pem,
            made.front_proxy.client.cert_pem
        );
        assert_eq!(
            used.front_proxy.requestheader_ca_pem,
            made.front_proxy.requestheader_ca_pem
        );
        assert!(!dir.path().join(FRONT_PROXY_CA_CERT_FILE).exists());
        // What kapi made: a client certificate for `front-proxy-client`
        // from a CA of its own, not the cluster's.
        let ca = made.front_proxy.requestheader_ca_pem.clone().unwrap();
        assert_ne!(ca, made.cluster_ca_pem);
        let client =
            CertificateDer::from_pem_slice(made.front_proxy.client.cert_pem.as_bytes()).unwrap();
        let (_, client) = x509_parser::parse_x509_certificate(&client).unwrap();
        let ca = CertificateDer::from_pem_slice(ca.as_bytes()).unwrap();
        let (_, ca) = x509_parser::parse_x509_certificate(&ca).unwrap();
        assert_eq!(client.subject().to_string(), "CN=front-proxy-client");
        assert!(client.verify_signature(Some(ca.public_key())).is_ok());
        assert_eq!(used.serving_chain, made.serving_chain);
        // A chain that ends below its CA names no CA to trust.
        assert_eq!(used.serving_ca_pem, None);
        assert_eq!(used.client_cas, made.client_cas);
        assert!(used.admin.is_none());
        assert!(!dir.path().join(SERVING_CERT_FILE).exists());
        let half = TlsFlags {
            cert_file: flags.cert_file.clone(),
            ..TlsFlags::default()
        };
        assert!(matches!(
            load(dir.path(), &half, &reachable()),
            Err(PkiError::Pair)
        ));
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "nothing").unwrap();
        let bad = TlsFlags {
            client_ca_file: Some(empty),
            ..TlsFlags::default()
        };
        let error = load(dir.path(), &bad, &reachable()).err().unwrap();
        assert!(error.to_string().contains("no PEM certificate"), "{error}");
    }

    #[test]
    fn a_ca_made_by_an_earlier_kapi_is_kept() {
        // Earlier versions wrote ca.crt and a PKCS#8 ca.key the same way.
        let dir = tempfile::tempdir().unwrap();
        let first = load(dir.path(), &TlsFlags::default(), &reachable()).unwrap();
        std::fs::remove_file(dir.path().join(ADMIN_CERT_FILE)).unwrap();
        let second = load(dir.path(), &TlsFlags::default(), &reachable()).unwrap();
        assert_eq!(first.cluster_ca_pem, second.cluster_ca_pem);
    }
}
