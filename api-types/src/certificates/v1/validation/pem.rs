//! Just enough PEM and DER to check what a CertificateSigningRequest carries
//! as kube-apiserver does: the request is a signed PKCS#10 `CERTIFICATE
//! REQUEST` block, and an issued chain holds only `CERTIFICATE` blocks.
//!
//! Signatures are verified with ring for the algorithms it implements (ECDSA
//! P-256/P-384 with SHA-256/384, RSA PKCS#1 v1.5 with SHA-1/256/384/512,
//! Ed25519); a request signed otherwise is accepted unverified.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::signature::{self, UnparsedPublicKey, VerificationAlgorithm};

/// One PEM block: its type, whether it has headers, and its decoded body.
pub(crate) struct Block {
    pub(crate) kind: String,
    pub(crate) has_headers: bool,
    pub(crate) der: Vec<u8>,
}

/// The first well-formed PEM block of `data` and what follows it, as Go's
/// `pem.Decode` finds it (text before a block is skipped; a malformed block is
/// passed over).
pub(crate) fn decode(data: &[u8]) -> Option<(Block, &[u8])> {
    let text = std::str::from_utf8(data).ok().or_else(|| {
        // Junk around the blocks need not be text; look at the longest text prefix.
        let valid = std::str::from_utf8(data).err()?.valid_up_to();
        std::str::from_utf8(&data[..valid]).ok()
    })?;
    let mut from = 0;
    while let Some(found) = text[from..].find("-----BEGIN ") {
        let start = from + found;
        from = start + 1;
        if start != 0 && !text[..start].ends_with('\n') {
            continue;
        }
        if let Some((block, end)) = block_at(&text[start..]) {
            return Some((block, &data[start + end..]));
        }
    }
    None
}

/// Parses the block that `text` starts with; the block and the length read.
fn block_at(text: &str) -> Option<(Block, usize)> {
    let header_line_end = text.find('\n')?;
    let first = text[..header_line_end].trim_end_matches('\r');
    let kind = first.strip_prefix("-----BEGIN ")?.strip_suffix("-----")?;
    let end_marker = format!("-----END {kind}-----");
    let body_start = header_line_end + 1;
    let end_at = body_start + text[body_start..].find(&end_marker)?;
    let body = &text[body_start..end_at];
    let mut has_headers = false;
    let mut encoded = String::new();
    let mut in_headers = true;
    for line in body.lines() {
        if in_headers && line.contains(':') {
            has_headers = true;
            continue;
        }
        in_headers = false;
        encoded.extend(line.chars().filter(|c| !c.is_ascii_whitespace()));
    }
    let der = STANDARD.decode(encoded).ok()?;
    let block = Block {
        kind: kind.to_owned(),
        has_headers,
        der,
    };
    Some((block, end_at + end_marker.len()))
}

/// One DER element: its tag byte, its contents, and all its bytes.
struct Element<'a> {
    tag: u8,
    content: &'a [u8],
    raw: &'a [u8],
}

/// Reads DER elements one after another.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    /// The next element, if one is there and whole.
    fn next(&mut self) -> Option<Element<'a>> {
        let data = self.0;
        let (&tag, rest) = data.split_first()?;
        let (&first, rest) = rest.split_first()?;
        let (len, rest) = if first < 0x80 {
            (usize::from(first), rest)
        } else {
            let count = usize::from(first & 0x7f);
            if count == 0 || count > 4 || rest.len() < count {
                return None;
            }
            let len = rest[..count]
                .iter()
                .fold(0usize, |n, b| (n << 8) | usize::from(*b));
            (len, &rest[count..])
        };
        if rest.len() < len {
            return None;
        }
        let header = data.len() - rest.len();
        self.0 = &rest[len..];
        Some(Element {
            tag,
            content: &rest[..len],
            raw: &data[..header + len],
        })
    }

    /// The next element, if it has tag `tag`.
    fn expect(&mut self, tag: u8) -> Option<Element<'a>> {
        self.next().filter(|e| e.tag == tag)
    }
}

const SEQUENCE: u8 = 0x30;
const BIT_STRING: u8 = 0x03;
const OID: u8 = 0x06;
const INTEGER: u8 = 0x02;

/// The parts of a PKCS#10 request a signature check needs.
struct Request<'a> {
    info: &'a [u8],
    signature_algorithm: &'a [u8],
    signature: &'a [u8],
    key_algorithm: &'a [u8],
    key_parameters: Option<&'a [u8]>,
    key: &'a [u8],
}

/// The contents of a BIT STRING without unused bits.
fn bits<'a>(element: &Element<'a>) -> Option<&'a [u8]> {
    element
        .content
        .split_first()
        .filter(|(unused, _)| **unused == 0)
        .map(|(_, b)| b)
}

fn parse_request(der: &[u8]) -> Option<Request<'_>> {
    let mut outer = Reader(der);
    let request = outer.expect(SEQUENCE)?;
    let mut parts = Reader(request.content);
    let info = parts.expect(SEQUENCE)?;
    let mut algorithm = Reader(parts.expect(SEQUENCE)?.content);
    let signature_algorithm = algorithm.expect(OID)?.content;
    let signature = bits(&parts.expect(BIT_STRING)?)?;
    let mut fields = Reader(info.content);
    fields.expect(INTEGER)?;
    fields.expect(SEQUENCE)?;
    let mut key_info = Reader(fields.expect(SEQUENCE)?.content);
    let mut key_algorithm = Reader(key_info.expect(SEQUENCE)?.content);
    let algorithm_oid = key_algorithm.expect(OID)?.content;
    let key_parameters = key_algorithm
        .next()
        .filter(|p| p.tag == OID)
        .map(|p| p.content);
    let key = bits(&key_info.expect(BIT_STRING)?)?;
    Some(Request {
        info: info.raw,
        signature_algorithm,
        signature,
        key_algorithm: algorithm_oid,
        key_parameters,
        key,
    })
}

// Object identifiers, as their DER contents.
const EC_KEY: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const P384: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x22];
const RSA_KEY: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const ED25519: &[u8] = &[0x2b, 0x65, 0x70];
const ECDSA_SHA256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02];
const ECDSA_SHA384: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03];
const RSA_PREFIX: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];

/// The ring algorithm of a signature by a key, and the words Go uses when
/// the signature does not verify; `None` when ring cannot check it.
fn algorithm_of(
    request: &Request<'_>,
) -> Option<(&'static dyn VerificationAlgorithm, &'static str)> {
    const ECDSA_FAILURE: &str = "x509: ECDSA verification failure";
    const RSA_FAILURE: &str = "crypto/rsa: verification error";
    let signed = request.signature_algorithm;
    let curve = request.key_parameters;
    let algorithm: &'static dyn VerificationAlgorithm = match request.key_algorithm {
        EC_KEY => match (curve, signed) {
            (Some(P256), ECDSA_SHA256) => &signature::ECDSA_P256_SHA256_ASN1,
            (Some(P256), ECDSA_SHA384) => &signature::ECDSA_P256_SHA384_ASN1,
            (Some(P384), ECDSA_SHA256) => &signature::ECDSA_P384_SHA256_ASN1,
            (Some(P384), ECDSA_SHA384) => &signature::ECDSA_P384_SHA384_ASN1,
            _ => return None,
        },
        RSA_KEY => {
            let algorithm: &'static dyn VerificationAlgorithm =
                match signed.strip_prefix(RSA_PREFIX)? {
                    [0x05] => &signature::RSA_PKCS1_1024_8192_SHA1_FOR_LEGACY_USE_ONLY,
                    [0x0b] => &signature::RSA_PKCS1_2048_8192_SHA256,
                    [0x0c] => &signature::RSA_PKCS1_2048_8192_SHA384,
                    [0x0d] => &signature::RSA_PKCS1_2048_8192_SHA512,
                    _ => return None,
                };
            return Some((algorithm, RSA_FAILURE));
        }
        ED25519 if signed == ED25519 => {
            return Some((&signature::ED25519, "x509: Ed25519 verification failure"));
        }
        _ => return None,
    };
    Some((algorithm, ECDSA_FAILURE))
}

/// What is wrong with a request (`spec.request`), in upstream's words: not a
/// `CERTIFICATE REQUEST` PEM block, not a PKCS#10 request, or a signature
/// that does not verify.
pub(super) fn request_error(data: &[u8]) -> Option<String> {
    let block = decode(data).map(|(block, _)| block);
    let Some(block) = block.filter(|b| b.kind == "CERTIFICATE REQUEST") else {
        return Some("PEM block type must be CERTIFICATE REQUEST".to_owned());
    };
    let Some(request) = parse_request(&block.der) else {
        return Some("x509: malformed certificate request".to_owned());
    };
    let (algorithm, failure) = algorithm_of(&request)?;
    UnparsedPublicKey::new(algorithm, request.key)
        .verify(request.info, request.signature)
        .err()
        .map(|_| failure.to_owned())
}

/// What is wrong with an issued chain (`status.certificate`), in upstream's
/// words; an empty one is fine.
pub(super) fn certificate_error(data: &[u8]) -> Option<String> {
    if data.is_empty() {
        return None;
    }
    let mut rest = data;
    let mut blocks = 0;
    while let Some((block, after)) = decode(rest) {
        if block.kind != "CERTIFICATE" {
            return Some(format!(
                "only CERTIFICATE PEM blocks are allowed, found {:?}",
                block.kind
            ));
        }
        if block.has_headers {
            return Some("no PEM block headers are permitted".to_owned());
        }
        blocks += 1;
        if !is_certificate(&block.der) {
            return Some("x509: malformed certificate".to_owned());
        }
        rest = after;
    }
    (blocks == 0).then(|| "must contain at least one CERTIFICATE PEM block".to_owned())
}

/// Whether DER bytes have the outline of an X.509 certificate: a sequence of
/// the signed part, the algorithm and the signature, and nothing after.
pub(crate) fn is_certificate(der: &[u8]) -> bool {
    let mut outer = Reader(der);
    let Some(certificate) = outer.expect(SEQUENCE) else {
        return false;
    };
    let mut parts = Reader(certificate.content);
    outer.0.is_empty()
        && parts.expect(SEQUENCE).is_some()
        && parts.expect(SEQUENCE).is_some()
        && parts.expect(BIT_STRING).is_some()
        && parts.0.is_empty()
}
