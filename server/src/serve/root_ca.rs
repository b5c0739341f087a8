//! The cluster CA certificate the root CA publisher hands to every namespace
//! (`kube-root-ca.crt`). kapi serves plain HTTP, so nothing is signed with it
//! yet; it is a real self-signed CA all the same (ECDSA P-256), made once and
//! kept as `<data-dir>/ca.crt` with its key beside it (`ca.key`, mode 0600), so
//! the published certificate stays the same across restarts. `--root-ca-file`
//! publishes another certificate instead.
//!
//! The certificate is encoded here by hand (a few DER structures) with ring,
//! already in the tree for service account tokens, rather than with a new
//! certificate crate.

use std::io::Write;
use std::path::Path;

use base64::Engine;
use jiff::{Timestamp, ToSpan, Zoned, tz::TimeZone};
use ring::digest::{SHA1_FOR_LEGACY_USE_ONLY, digest};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair};

/// The file name of the certificate in the data directory.
pub const CA_CERT_FILE: &str = "ca.crt";
/// The file name of its private key.
pub const CA_KEY_FILE: &str = "ca.key";
/// The certificate's common name.
const COMMON_NAME: &str = "kapi-ca";
/// How long the certificate is valid, in years (kubeadm's CA: ten).
const VALID_YEARS: i64 = 10;

/// Reads the PEM certificate at `path`, which must hold one.
pub fn read(path: &Path) -> std::io::Result<String> {
    let pem = std::fs::read_to_string(path)?;
    if !pem.contains("-----BEGIN CERTIFICATE-----") {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: no PEM certificate in it", path.display()),
        ));
    }
    Ok(pem)
}

/// The CA certificate of `data_dir`, made on first use.
pub fn load_or_create(data_dir: &Path) -> std::io::Result<String> {
    let cert_path = data_dir.join(CA_CERT_FILE);
    if cert_path.exists() {
        return read(&cert_path);
    }
    std::fs::create_dir_all(data_dir)?;
    let (cert_pem, key_pem) = generate().map_err(std::io::Error::other)?;
    write_private(&data_dir.join(CA_KEY_FILE), key_pem.as_bytes())?;
    // Written last: a crash in between makes a new pair next time.
    std::fs::write(&cert_path, cert_pem.as_bytes())?;
    Ok(cert_pem)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(bytes)
}

/// A new self-signed CA: the certificate and its PKCS#8 key, both PEM.
pub fn generate() -> Result<(String, String), String> {
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng)
        .map_err(|_| "could not generate a key".to_owned())?;
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng)
        .map_err(|e| e.to_string())?;
    let mut serial = [0u8; 16];
    rng.fill(&mut serial)
        .map_err(|_| "no random serial".to_owned())?;
    // A positive INTEGER in minimal DER: no leading zero byte, top bit clear.
    serial[0] = (serial[0] & 0x7f) | 0x40;
    let now = Timestamp::now();
    let not_before = now - 1.hour();
    let not_after = now
        .to_zoned(TimeZone::UTC)
        .checked_add(VALID_YEARS.years())
        .map_err(|e| e.to_string())?;
    let tbs = tbs_certificate(&serial, not_before, &not_after, pair.public_key().as_ref());
    let signature = pair.sign(&rng, &tbs).map_err(|e| e.to_string())?;
    let cert = sequence(&[tbs, ecdsa_with_sha256(), bit_string(signature.as_ref())]);
    Ok((
        pem("CERTIFICATE", &cert),
        pem("PRIVATE KEY", pkcs8.as_ref()),
    ))
}

fn tbs_certificate(
    serial: &[u8],
    not_before: Timestamp,
    not_after: &Zoned,
    public_key: &[u8],
) -> Vec<u8> {
    let name = sequence(&[tlv(
        0x31,
        &sequence(&[oid(&[0x55, 0x04, 0x03]), tlv(0x0c, COMMON_NAME.as_bytes())]),
    )]);
    let validity = sequence(&[time(&not_before.to_zoned(TimeZone::UTC)), time(not_after)]);
    let key_info = sequence(&[
        sequence(&[
            oid(&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]),
            oid(&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]),
        ]),
        bit_string(public_key),
    ]);
    let key_id = digest(&SHA1_FOR_LEGACY_USE_ONLY, public_key);
    let critical = tlv(0x01, &[0xff]);
    let extensions = sequence(&[
        // basicConstraints: CA.
        sequence(&[
            oid(&[0x55, 0x1d, 0x13]),
            critical.clone(),
            tlv(0x04, &sequence(&[tlv(0x01, &[0xff])])),
        ]),
        // keyUsage: digitalSignature, keyCertSign, cRLSign.
        sequence(&[
            oid(&[0x55, 0x1d, 0x0f]),
            critical,
            tlv(0x04, &tlv(0x03, &[0x01, 0x86])),
        ]),
        // subjectKeyIdentifier.
        sequence(&[
            oid(&[0x55, 0x1d, 0x0e]),
            tlv(0x04, &tlv(0x04, key_id.as_ref())),
        ]),
    ]);
    sequence(&[
        tlv(0xa0, &tlv(0x02, &[0x02])),
        tlv(0x02, serial),
        ecdsa_with_sha256(),
        name.clone(),
        validity,
        name,
        key_info,
        tlv(0xa3, &extensions),
    ])
}

fn ecdsa_with_sha256() -> Vec<u8> {
    sequence(&[oid(&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02])])
}

/// UTCTime before 2050, GeneralizedTime from then on (RFC 5280 4.1.2.5).
fn time(at: &Zoned) -> Vec<u8> {
    if at.year() < 2050 {
        tlv(0x17, at.strftime("%y%m%d%H%M%SZ").to_string().as_bytes())
    } else {
        tlv(0x18, at.strftime("%Y%m%d%H%M%SZ").to_string().as_bytes())
    }
}

fn oid(encoded: &[u8]) -> Vec<u8> {
    tlv(0x06, encoded)
}

fn bit_string(bytes: &[u8]) -> Vec<u8> {
    let mut content = Vec::with_capacity(bytes.len() + 1);
    content.push(0);
    content.extend_from_slice(bytes);
    tlv(0x03, &content)
}

fn sequence(parts: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x30, &parts.concat())
}

/// One DER element: tag, definite length, content.
fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

fn pem(label: &str, der: &[u8]) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in encoded.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lengths_are_encoded_in_base_256() {
        assert_eq!(tlv(0x04, &[0; 3])[..2], [0x04, 3]);
        assert_eq!(tlv(0x04, &[0; 200])[..3], [0x04, 0x81, 200]);
        assert_eq!(tlv(0x04, &[0; 300])[..4], [0x04, 0x82, 0x01, 0x2c]);
    }

    #[test]
    fn a_new_ca_is_a_pem_certificate() {
        let (cert, key) = generate().unwrap();
        assert!(cert.starts_with("-----BEGIN CERTIFICATE-----\n"));
        assert!(key.starts_with("-----BEGIN PRIVATE KEY-----\n"));
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_create(dir.path()).unwrap();
        assert_eq!(load_or_create(dir.path()).unwrap(), first);
    }
}
