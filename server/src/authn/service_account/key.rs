//! The service account key: kapi signs the tokens of
//! `serviceaccounts/<name>/token` with it and verifies them with it.
//!
//! It is a P-256 key (ES256) kept in the store, made on first use, so that
//! every replica on one etcd signs and verifies with the same key. Its public
//! half is served as a JSON Web Key set at `/openid/v1/jwks`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use kapi_storage::{Storage, StorageError};
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair,
    UnparsedPublicKey,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::api_error::{ApiError, ApiResult, Target};

/// Where the signing key (PKCS#8) lives in the store: outside every
/// resource's prefix (resource names have no dashes).
const KEY: &str = "/registry/kapi.dev/serviceaccount-signing-key";

/// DER prefix of a P-256 public key's SubjectPublicKeyInfo, before the
/// uncompressed point: the key id hashes the whole structure, as Go's.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// The key, loaded from the store (or made and stored) on first use.
#[derive(Default)]
pub struct ServiceAccountKey {
    signer: tokio::sync::OnceCell<Signer>,
}

impl ServiceAccountKey {
    /// The signer, loaded on first use.
    pub async fn signer(&self, storage: &dyn Storage) -> ApiResult<&Signer> {
        self.signer.get_or_try_init(|| load_signer(storage)).await
    }
}

/// Signs and verifies tokens.
pub struct Signer {
    pair: EcdsaKeyPair,
    kid: String,
    rng: SystemRandom,
}

impl Signer {
    fn from_pkcs8(der: &[u8]) -> Result<Signer, String> {
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng)
            .map_err(|e| format!("the service account signing key is unusable: {e}"))?;
        let mut spki = P256_SPKI_PREFIX.to_vec();
        spki.extend_from_slice(pair.public_key().as_ref());
        let kid = URL_SAFE_NO_PAD.encode(Sha256::digest(&spki));
        Ok(Signer { pair, kid, rng })
    }

    /// The public key as a JSON Web Key set (`/openid/v1/jwks`).
    pub fn jwks(&self) -> Value {
        // An uncompressed P-256 point: 0x04, then x and y, 32 bytes each.
        let point = self.pair.public_key().as_ref();
        let (x, y) = point
            .get(1..)
            .unwrap_or_default()
            .split_at(point.len().saturating_sub(1) / 2);
        json!({ "keys": [{
            "use": "sig",
            "kty": "EC",
            "kid": self.kid,
            "crv": "P-256",
            "alg": "ES256",
            "x": URL_SAFE_NO_PAD.encode(x),
            "y": URL_SAFE_NO_PAD.encode(y),
        }]})
    }

    /// A compact JWS of `claims`.
    pub fn sign(&self, claims: &Value) -> Result<String, String> {
        let header = json!({ "alg": "ES256", "kid": self.kid });
        let header = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
        let payload = serde_json::to_vec(claims).map_err(|e| e.to_string())?;
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header),
            URL_SAFE_NO_PAD.encode(payload)
        );
        let signature = self
            .pair
            .sign(&self.rng, input.as_bytes())
            .map_err(|e| format!("signing failed: {e}"))?;
        Ok(format!(
            "{input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }

    /// The claims of a compact JWS this key signed; `None` for anything
    /// else (another key, another algorithm, not a JWS at all).
    pub fn verify(&self, token: &str) -> Option<Value> {
        let (input, signature) = token.rsplit_once('.')?;
        let (header, payload) = input.split_once('.')?;
        let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).ok()?).ok()?;
        if header["alg"] != "ES256" {
            return None;
        }
        let signature = URL_SAFE_NO_PAD.decode(signature).ok()?;
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, self.pair.public_key().as_ref())
            .verify(input.as_bytes(), &signature)
            .ok()?;
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()
    }
}

/// The service account issuer's key set, for those who verify its tokens
/// (`/openid/v1/jwks`).
pub async fn jwks(storage: &dyn Storage) -> ApiResult<Value> {
    Ok(load_signer(storage).await?.jwks())
}

/// The signer, loaded from the store or, the first time, made and stored (a
/// replica that loses the race to store it loads the winner's).
async fn load_signer(storage: &dyn Storage) -> ApiResult<Signer> {
    if let Some(kv) = storage.get(KEY).await.map_err(storage_error)? {
        return Signer::from_pkcs8(&kv.value).map_err(ApiError::internal);
    }
    let rng = SystemRandom::new();
    let made = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
        .map_err(|e| ApiError::internal(format!("cannot make a signing key: {e}")))?;
    let der = bytes::Bytes::copy_from_slice(made.as_ref());
    match storage.create(KEY, der.clone()).await {
        Ok(_) => Signer::from_pkcs8(&der).map_err(ApiError::internal),
        Err(StorageError::AlreadyExists(_)) => {
            let kv = storage
                .get(KEY)
                .await
                .map_err(storage_error)?
                .ok_or_else(|| ApiError::internal("the signing key vanished"))?;
            Signer::from_pkcs8(&kv.value).map_err(ApiError::internal)
        }
        Err(e) => Err(storage_error(e)),
    }
}

fn storage_error(e: StorageError) -> ApiError {
    ApiError::from_storage(e, Target::NONE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_verifies_only_with_its_own_key_and_unchanged() {
        let rng = SystemRandom::new();
        let make = || {
            let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
            Signer::from_pkcs8(der.as_ref()).unwrap()
        };
        let (key, other) = (make(), make());
        let token = key.sign(&json!({"sub": "x"})).unwrap();
        assert_eq!(key.verify(&token), Some(json!({"sub": "x"})));
        assert_eq!(other.verify(&token), None);
        let (input, signature) = token.rsplit_once('.').unwrap();
        let (header, _) = input.split_once('.').unwrap();
        let forged = format!(
            "{header}.{}.{signature}",
            URL_SAFE_NO_PAD.encode(b"{\"sub\":\"y\"}")
        );
        assert_eq!(key.verify(&forged), None);
        for junk in ["", ".", "a.b.c", "a.b", "not a token"] {
            assert_eq!(key.verify(junk), None, "{junk}");
        }
    }
}
