//! Service account keys: the key tokens are signed with and the public keys
//! they are verified with, read from PEM files as kube-apiserver reads
//! `--service-account-signing-key-file` and `--service-account-key-file`, or
//! kept in the store.
//!
//! RSA keys sign with RS256 and EC keys on P-256 or P-384 with ES256 or
//! ES384, the algorithms upstream picks for them. A key's id (`kid`) is the
//! unpadded base64url SHA-256 of its PKIX (SubjectPublicKeyInfo) encoding, as
//! upstream computes it, so both servers name the same key alike.
//!
//! Without a signing key file the key is a P-256 key kept in the store, made
//! on first use, so that every replica on one etcd signs and verifies with the
//! same key.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use kapi_storage::{Storage, StorageError};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair as _, RsaKeyPair, UnparsedPublicKey};
use rustls::pki_types::pem::SectionKind;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use x509_parser::prelude::FromDer;
use x509_parser::public_key::PublicKey as Parsed;

use crate::api_error::{ApiError, ApiResult, Target};
use crate::pki::pem;

/// Where the stored signing key (PKCS#8) lives: outside every resource's
/// prefix (resource names have no dashes).
const KEY: &str = "/registry/kapi.dev/serviceaccount-signing-key";

/// DER of the OIDs and values a PKIX public key is made of.
const RSA_ENCRYPTION: &[u8] = &[
    0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
];
const EC_PUBLIC_KEY: &[u8] = &[0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const P256: &[u8] = &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const P384: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22];

/// A JWS signature algorithm kapi signs or verifies with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
    /// ECDSA on P-256 with SHA-256.
    Es256,
    /// ECDSA on P-384 with SHA-384.
    Es384,
}

impl Algorithm {
    /// The name in a JWS header.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Rs256 => "RS256",
            Algorithm::Es256 => "ES256",
            Algorithm::Es384 => "ES384",
        }
    }

    fn verification(self) -> &'static dyn signature::VerificationAlgorithm {
        match self {
            Algorithm::Rs256 => &signature::RSA_PKCS1_2048_8192_SHA256,
            Algorithm::Es256 => &signature::ECDSA_P256_SHA256_FIXED,
            Algorithm::Es384 => &signature::ECDSA_P384_SHA384_FIXED,
        }
    }

    /// The curve's OID (DER) and JWK name, for EC algorithms.
    fn curve(self) -> Option<(&'static [u8], &'static str)> {
        match self {
            Algorithm::Rs256 => None,
            Algorithm::Es256 => Some((P256, "P-256")),
            Algorithm::Es384 => Some((P384, "P-384")),
        }
    }
}

/// A public key tokens are verified with.
#[derive(Clone, Debug)]
pub struct PublicKey {
    algorithm: Algorithm,
    /// What ring verifies with: the PKCS#1 RSAPublicKey, or the EC point.
    key: Vec<u8>,
    kid: String,
    /// The JSON Web Key's members beyond `use`, `kid` and `alg`.
    jwk: Value,
}

impl PublicKey {
    /// The key of a DER PKIX SubjectPublicKeyInfo.
    pub fn from_spki(der: &[u8]) -> Result<PublicKey, String> {
        let (_, spki) = x509_parser::x509::SubjectPublicKeyInfo::from_der(der)
            .map_err(|e| format!("not a public key: {e}"))?;
        let key = spki.subject_public_key.data.to_vec();
        match spki.parsed().map_err(|e| e.to_string())? {
            Parsed::RSA(rsa) => {
                let unsigned = |b: &[u8]| {
                    let first = b.iter().position(|x| *x != 0).unwrap_or(b.len());
                    URL_SAFE_NO_PAD.encode(&b[first..])
                };
                let jwk = json!({"kty": "RSA", "n": unsigned(rsa.modulus),
                    "e": unsigned(rsa.exponent)});
                Ok(PublicKey::new(Algorithm::Rs256, key, jwk))
            }
            Parsed::EC(_) => {
                let curve = spki
                    .algorithm
                    .parameters
                    .as_ref()
                    .and_then(|p| p.as_oid().ok())
                    .map(|oid| oid.to_id_string());
                let algorithm = match curve.as_deref() {
                    Some("1.2.840.10045.3.1.7") => Algorithm::Es256,
                    Some("1.3.132.0.34") => Algorithm::Es384,
                    other => {
                        return Err(format!(
                            "unsupported elliptic curve {} (P-256 and P-384 are)",
                            other.unwrap_or("(unnamed)")
                        ));
                    }
                };
                // An uncompressed point: 0x04, then x and y.
                let coordinates = match key.split_first() {
                    Some((4, xy)) if xy.len() % 2 == 0 => xy,
                    _ => return Err("the EC point is not uncompressed".to_owned()),
                };
                let (x, y) = coordinates.split_at(coordinates.len() / 2);
                let name = algorithm.curve().map(|(_, name)| name);
                let jwk = json!({"kty": "EC", "crv": name,
                    "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y)});
                Ok(PublicKey::new(algorithm, key, jwk))
            }
            _ => Err("not an RSA or ECDSA public key".to_owned()),
        }
    }

    fn new(algorithm: Algorithm, key: Vec<u8>, jwk: Value) -> PublicKey {
        let kid = URL_SAFE_NO_PAD.encode(Sha256::digest(spki(algorithm, &key)));
        PublicKey {
            algorithm,
            key,
            kid,
            jwk,
        }
    }

    /// The key id.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The algorithm tokens signed with the key use.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The key as a JSON Web Key.
    pub fn jwk(&self) -> Value {
        let mut jwk = json!({"use": "sig", "kid": self.kid, "alg": self.algorithm.name()});
        if let (Some(jwk), Some(members)) = (jwk.as_object_mut(), self.jwk.as_object()) {
            for (name, value) in members {
                jwk.insert(name.clone(), value.clone());
            }
        }
        jwk
    }

    /// Whether `signature` (JWS form) over `input` is this key's, for a
    /// token whose header names `algorithm`.
    fn verifies(&self, algorithm: &str, input: &[u8], signature: &[u8]) -> bool {
        algorithm == self.algorithm.name()
            && UnparsedPublicKey::new(self.algorithm.verification(), &self.key)
                .verify(input, signature)
                .is_ok()
    }
}

/// DER of `content` under `tag`.
fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let first = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
        out.push(0x80 | (bytes.len() - first) as u8);
        out.extend_from_slice(&bytes[first..]);
    }
    out.extend_from_slice(content);
    out
}

/// The PKIX encoding of a key, as Go's `x509.MarshalPKIXPublicKey`.
fn spki(algorithm: Algorithm, key: &[u8]) -> Vec<u8> {
    let identifier = match algorithm.curve() {
        None => RSA_ENCRYPTION.to_vec(),
        Some((curve, _)) => [EC_PUBLIC_KEY, curve].concat(),
    };
    let bits = [&[0u8][..], key].concat();
    der(0x30, &[der(0x30, &identifier), der(0x03, &bits)].concat())
}

/// The private half of a signing key.
enum Private {
    Rsa(RsaKeyPair),
    Ec(EcdsaKeyPair),
}

/// Signs tokens.
pub struct Signer {
    private: Private,
    public: PublicKey,
    rng: SystemRandom,
}

impl Signer {
    /// The key of a PKCS#8 document (RSA, or EC on P-256 or P-384).
    fn from_pkcs8(der: &[u8]) -> Result<Signer, String> {
        let rng = SystemRandom::new();
        if let Ok(pair) = RsaKeyPair::from_pkcs8(der) {
            return Signer::rsa(pair);
        }
        for (algorithm, signing) in [
            (
                Algorithm::Es256,
                &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            ),
            (
                Algorithm::Es384,
                &signature::ECDSA_P384_SHA384_FIXED_SIGNING,
            ),
        ] {
            if let Ok(pair) = EcdsaKeyPair::from_pkcs8(signing, der, &rng) {
                return Signer::ec(algorithm, pair);
            }
        }
        Err("not an RSA key of 2048 to 4096 bits or an EC key on P-256 or P-384".to_owned())
    }

    /// The key of a SEC 1 `EC PRIVATE KEY` (which must carry its public
    /// key, as OpenSSL writes it), wrapped as PKCS#8 for each curve in turn.
    fn from_sec1(der_bytes: &[u8]) -> Result<Signer, String> {
        for curve in [P256, P384] {
            let identifier = der(0x30, &[EC_PUBLIC_KEY, curve].concat());
            let version = [0x02, 0x01, 0x00];
            let pkcs8 = der(
                0x30,
                &[&version[..], &identifier, &der(0x04, der_bytes)].concat(),
            );
            if let Ok(signer) = Signer::from_pkcs8(&pkcs8) {
                return Ok(signer);
            }
        }
        Err("not an EC key on P-256 or P-384 with its public key".to_owned())
    }

    fn rsa(pair: RsaKeyPair) -> Result<Signer, String> {
        let public = spki(Algorithm::Rs256, pair.public_key().as_ref());
        Ok(Signer {
            public: PublicKey::from_spki(&public)?,
            private: Private::Rsa(pair),
            rng: SystemRandom::new(),
        })
    }

    fn ec(algorithm: Algorithm, pair: EcdsaKeyPair) -> Result<Signer, String> {
        let public = spki(algorithm, pair.public_key().as_ref());
        Ok(Signer {
            public: PublicKey::from_spki(&public)?,
            private: Private::Ec(pair),
            rng: SystemRandom::new(),
        })
    }

    /// The public half.
    pub fn public(&self) -> &PublicKey {
        &self.public
    }

    /// A compact JWS of `claims`.
    pub fn sign(&self, claims: &Value) -> Result<String, String> {
        let header = json!({ "alg": self.public.algorithm.name(), "kid": self.public.kid });
        let header = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
        let payload = serde_json::to_vec(claims).map_err(|e| e.to_string())?;
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header),
            URL_SAFE_NO_PAD.encode(payload)
        );
        let signature = match &self.private {
            Private::Rsa(pair) => {
                let mut signature = vec![0; pair.public().modulus_len()];
                pair.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &self.rng,
                    input.as_bytes(),
                    &mut signature,
                )
                .map_err(|e| format!("signing failed: {e}"))?;
                signature
            }
            Private::Ec(pair) => pair
                .sign(&self.rng, input.as_bytes())
                .map_err(|e| format!("signing failed: {e}"))?
                .as_ref()
                .to_vec(),
        };
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}

/// The claims of a compact JWS one of `keys` signed, or why not in
/// upstream's words. A token naming a key id is tried with that key only,
/// as upstream looks keys up by the id.
pub fn verify<'k>(
    token: &str,
    keys: impl IntoIterator<Item = &'k PublicKey>,
) -> Result<Value, String> {
    let malformed = || "square/go-jose: compact JWS format must have three parts".to_owned();
    let (input, signature) = token.rsplit_once('.').ok_or_else(malformed)?;
    let (header, payload) = input.split_once('.').ok_or_else(malformed)?;
    let header: Value = URL_SAFE_NO_PAD
        .decode(header)
        .ok()
        .and_then(|h| serde_json::from_slice(&h).ok())
        .ok_or_else(malformed)?;
    let algorithm = header["alg"].as_str().unwrap_or_default();
    let kid = header["kid"].as_str().unwrap_or_default();
    let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| malformed())?;
    let candidates: Vec<&PublicKey> = keys
        .into_iter()
        .filter(|key| kid.is_empty() || key.kid == kid)
        .collect();
    if candidates.is_empty() {
        return Err("invalid signature, no keys found".to_owned());
    }
    if !candidates
        .iter()
        .any(|key| key.verifies(algorithm, input.as_bytes(), &signature))
    {
        let one = "square/go-jose: error in cryptographic primitive";
        return Err(if candidates.len() == 1 {
            one.to_owned()
        } else {
            format!("[{}]", vec![one; candidates.len()].join(", "))
        });
    }
    URL_SAFE_NO_PAD
        .decode(payload)
        .ok()
        .and_then(|p| serde_json::from_slice(&p).ok())
        .ok_or_else(malformed)
}

/// The PEM blocks of `text`: each block's kind and DER.
fn pem_blocks(text: &[u8]) -> Result<Vec<(SectionKind, Vec<u8>)>, String> {
    let mut reader = std::io::BufReader::new(text);
    let mut blocks = Vec::new();
    while let Some(block) =
        rustls::pki_types::pem::from_buf(&mut reader).map_err(|e| e.to_string())?
    {
        blocks.push(block);
    }
    Ok(blocks)
}

/// The signing key of one PEM block, when it holds a private key (PKCS#1
/// or PKCS#8 RSA, SEC 1 or PKCS#8 EC).
fn signer_of_block(kind: SectionKind, der: &[u8]) -> Option<Result<Signer, String>> {
    match kind {
        SectionKind::RsaPrivateKey => Some(
            RsaKeyPair::from_der(der)
                .map_err(|e| format!("unusable RSA private key: {e}"))
                .and_then(Signer::rsa),
        ),
        SectionKind::PrivateKey => Some(Signer::from_pkcs8(der)),
        SectionKind::EcPrivateKey => Some(Signer::from_sec1(der)),
        _ => None,
    }
}

/// The signing key of a PEM file's first private key, as
/// `--service-account-signing-key-file`.
pub fn signer_from_pem(text: &[u8]) -> Result<Signer, String> {
    pem_blocks(text)?
        .into_iter()
        .find_map(|(kind, der)| signer_of_block(kind, &der))
        .unwrap_or_else(|| Err("data does not contain a valid RSA or ECDSA private key".to_owned()))
}

/// Every public key of a PEM file, as `--service-account-key-file` reads
/// one: public keys, certificates' keys and private keys' public halves.
pub fn public_keys_from_pem(text: &[u8]) -> Result<Vec<PublicKey>, String> {
    let mut keys = Vec::new();
    for (kind, der) in pem_blocks(text)? {
        let key = match kind {
            SectionKind::PublicKey => PublicKey::from_spki(&der)?,
            SectionKind::Certificate => {
                let (_, certificate) = x509_parser::parse_x509_certificate(&der)
                    .map_err(|e| format!("not a certificate: {e}"))?;
                PublicKey::from_spki(certificate.public_key().raw)?
            }
            _ => match signer_of_block(kind, &der) {
                Some(signer) => signer?.public,
                None => continue,
            },
        };
        keys.push(key);
    }
    if keys.is_empty() {
        return Err("data does not contain any valid RSA or ECDSA public keys".to_owned());
    }
    Ok(keys)
}

/// The stored signing key: loaded from the store or, the first time, made
/// and stored (a replica that loses the race to store it loads the
/// winner's). Its PKCS#8 PEM comes along, for the files kapi writes.
pub async fn stored_signer(storage: &dyn Storage) -> ApiResult<(Signer, String)> {
    let load = |der: &[u8]| {
        let signer = Signer::from_pkcs8(der).map_err(ApiError::internal)?;
        Ok::<_, ApiError>((signer, pem("PRIVATE KEY", der)))
    };
    if let Some(kv) = storage.get(KEY).await.map_err(storage_error)? {
        return load(&kv.value);
    }
    let made = EcdsaKeyPair::generate_pkcs8(
        &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
        &SystemRandom::new(),
    )
    .map_err(|e| ApiError::internal(format!("cannot make a signing key: {e}")))?;
    let der = bytes::Bytes::copy_from_slice(made.as_ref());
    match storage.create(KEY, der.clone()).await {
        Ok(_) => load(&der),
        Err(StorageError::AlreadyExists(_)) => {
            let kv = storage
                .get(KEY)
                .await
                .map_err(storage_error)?
                .ok_or_else(|| ApiError::internal("the signing key vanished"))?;
            load(&kv.value)
        }
        Err(e) => Err(storage_error(e)),
    }
}

/// The public half of a signer as a PEM `PUBLIC KEY`.
pub fn public_pem(signer: &Signer) -> String {
    pem(
        "PUBLIC KEY",
        &spki(signer.public.algorithm, &signer.public.key),
    )
}

fn storage_error(e: StorageError) -> ApiError {
    ApiError::from_storage(e, Target::NONE)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test keys (made with `openssl genrsa 2048` and `openssl ecparam
    /// -genkey -name prime256v1`), and the public half of the RSA one.
    const RSA_PKCS1: &str = include_str!("testdata/rsa.key");
    const RSA_PUBLIC: &str = include_str!("testdata/rsa.pub");
    const EC_SEC1: &str = include_str!("testdata/ec.key");

    fn verified<'k>(token: &str, keys: impl IntoIterator<Item = &'k PublicKey>) -> Option<Value> {
        verify(token, keys).ok()
    }

    fn p256() -> Signer {
        let der = EcdsaKeyPair::generate_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &SystemRandom::new(),
        )
        .unwrap();
        Signer::from_pkcs8(der.as_ref()).unwrap()
    }

    #[test]
    fn a_token_verifies_only_with_its_own_key_and_unchanged() {
        let (key, other) = (p256(), p256());
        let token = key.sign(&json!({"sub": "x"})).unwrap();
        assert_eq!(verified(&token, [key.public()]), Some(json!({"sub": "x"})));
        assert_eq!(verified(&token, [other.public()]), None);
        assert_eq!(
            verified(&token, [other.public(), key.public()]),
            Some(json!({"sub": "x"}))
        );
        let (input, signature) = token.rsplit_once('.').unwrap();
        let (header, _) = input.split_once('.').unwrap();
        let forged = format!(
            "{header}.{}.{signature}",
            URL_SAFE_NO_PAD.encode(b"{\"sub\":\"y\"}")
        );
        assert_eq!(verified(&forged, [key.public()]), None);
        for junk in ["", ".", "a.b.c", "a.b", "not a token"] {
            assert_eq!(verified(junk, [key.public()]), None, "{junk}");
        }
    }

    #[test]
    fn rsa_and_sec1_keys_sign_with_their_algorithms() {
        let rsa = signer_from_pem(RSA_PKCS1.as_bytes()).unwrap();
        assert_eq!(rsa.public().algorithm(), Algorithm::Rs256);
        let token = rsa.sign(&json!({"sub": "r"})).unwrap();
        let published = public_keys_from_pem(RSA_PUBLIC.as_bytes()).unwrap();
        assert_eq!(published[0].kid(), rsa.public().kid());
        assert_eq!(verified(&token, &published), Some(json!({"sub": "r"})));
        // The public half written back reads as the same key.
        let again = public_keys_from_pem(public_pem(&rsa).as_bytes()).unwrap();
        assert_eq!(again[0].kid(), rsa.public().kid());
        assert_eq!(again[0].jwk(), rsa.public().jwk());
        assert_eq!(rsa.public().jwk()["e"], "AQAB");

        let ec = signer_from_pem(EC_SEC1.as_bytes()).unwrap();
        assert_eq!(ec.public().algorithm(), Algorithm::Es256);
        let token = ec.sign(&json!({"sub": "e"})).unwrap();
        // A private key file serves as a public key file too.
        let keys = public_keys_from_pem(EC_SEC1.as_bytes()).unwrap();
        assert_eq!(verified(&token, &keys), Some(json!({"sub": "e"})));
        assert_eq!(verified(&token, &published), None);
        let jwk = ec.public().jwk();
        assert_eq!(
            (jwk["kty"].as_str(), jwk["crv"].as_str()),
            (Some("EC"), Some("P-256"))
        );
    }

    #[test]
    fn files_without_keys_are_refused() {
        let none = public_keys_from_pem(b"no pem here").unwrap_err();
        assert_eq!(
            none,
            "data does not contain any valid RSA or ECDSA public keys"
        );
        assert!(signer_from_pem(RSA_PUBLIC.as_bytes()).is_err());
    }

    #[test]
    fn long_der_lengths_are_encoded_in_long_form() {
        assert_eq!(der(0x04, &[1; 3]), [0x04, 3, 1, 1, 1]);
        let long = der(0x04, &[0; 300]);
        assert_eq!(&long[..4], &[0x04, 0x82, 0x01, 0x2c]);
    }
}
