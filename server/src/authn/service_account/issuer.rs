//! The service account token issuer: its names (`--service-account-issuer`,
//! the first issues, all are accepted), the API server's audiences
//! (`--api-audiences`, by default the issuer names), the key it signs with
//! (`--service-account-signing-key-file`, else one kept in the store) and the
//! keys it verifies with (the signing key's public half and every key of
//! `--service-account-key-file`).

use std::path::PathBuf;

use kapi_storage::Storage;
use serde_json::{Value, json};

use super::key::{self, PublicKey, Signer};
use crate::api_error::ApiResult;

/// kube-apiserver's common issuer, kapi's by default: also the API server's
/// audience unless told otherwise.
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// The flags an issuer is made from.
#[derive(Clone, Debug, Default)]
pub struct IssuerFlags {
    /// `--service-account-issuer`, in order (none: [`DEFAULT_ISSUER`]).
    pub issuers: Vec<String>,
    /// `--api-audiences` (none: the issuers).
    pub api_audiences: Vec<String>,
    /// `--service-account-signing-key-file`.
    pub signing_key_file: Option<PathBuf>,
    /// `--service-account-key-file`, each.
    pub key_files: Vec<PathBuf>,
}

/// Why the flags make no issuer.
#[derive(Debug, thiserror::Error)]
#[error("{flag} {path}: {message}")]
pub struct IssuerError {
    flag: &'static str,
    path: String,
    message: String,
}

/// The error of `flag`'s file `path`, for a message.
fn failure<'p>(
    flag: &'static str,
    path: &'p std::path::Path,
) -> impl Fn(String) -> IssuerError + 'p {
    move |message| IssuerError {
        flag,
        path: path.display().to_string(),
        message,
    }
}

/// Where the signing key comes from.
enum Signing {
    /// The store's, loaded on first use, with its PKCS#8 PEM.
    Stored(tokio::sync::OnceCell<(Signer, String)>),
    /// A file's, read at start.
    File(Signer),
}

/// The issuer.
pub struct Issuer {
    names: Vec<String>,
    api_audiences: Vec<String>,
    signing: Signing,
    /// `--service-account-key-file`'s keys.
    verifying: Vec<PublicKey>,
}

impl std::fmt::Debug for Issuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issuer")
            .field("names", &self.names)
            .field("api_audiences", &self.api_audiences)
            .finish_non_exhaustive()
    }
}

impl Default for Issuer {
    /// [`DEFAULT_ISSUER`], signing with the stored key.
    fn default() -> Issuer {
        Issuer {
            names: vec![DEFAULT_ISSUER.to_owned()],
            api_audiences: vec![DEFAULT_ISSUER.to_owned()],
            signing: Signing::Stored(tokio::sync::OnceCell::new()),
            verifying: Vec::new(),
        }
    }
}

impl Issuer {
    /// The issuer the flags describe, its key files read.
    pub fn from_flags(flags: &IssuerFlags) -> Result<Issuer, IssuerError> {
        let mut issuer = Issuer::default();
        if !flags.issuers.is_empty() {
            issuer.names = flags.issuers.clone();
        }
        issuer.api_audiences = if flags.api_audiences.is_empty() {
            issuer.names.clone()
        } else {
            flags.api_audiences.clone()
        };
        if let Some(path) = &flags.signing_key_file {
            let fail = failure("--service-account-signing-key-file", path);
            let text = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
            issuer.signing = Signing::File(key::signer_from_pem(&text).map_err(fail)?);
        }
        for path in &flags.key_files {
            let fail = failure("--service-account-key-file", path);
            let text = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
            issuer
                .verifying
                .extend(key::public_keys_from_pem(&text).map_err(fail)?);
        }
        Ok(issuer)
    }

    /// The name tokens are issued with (`iss`).
    pub fn name(&self) -> &str {
        self.names.first().map_or(DEFAULT_ISSUER, String::as_str)
    }

    /// Every name whose tokens are verified.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The API server's audiences: a token for any of them is good for the
    /// API server.
    pub fn api_audiences(&self) -> &[String] {
        &self.api_audiences
    }

    /// kapi's own signing key, kept in the store, as PEM files (the private
    /// key, PKCS#8, and the public one); `None` with a signing key file.
    pub async fn stored_key_files(
        &self,
        storage: &dyn Storage,
    ) -> ApiResult<Option<(&str, String)>> {
        match &self.signing {
            Signing::File(_) => Ok(None),
            Signing::Stored(cell) => {
                let (signer, private) =
                    cell.get_or_try_init(|| key::stored_signer(storage)).await?;
                Ok(Some((private.as_str(), key::public_pem(signer))))
            }
        }
    }

    /// The signing key, loaded on first use.
    pub async fn signer(&self, storage: &dyn Storage) -> ApiResult<&Signer> {
        match &self.signing {
            Signing::File(signer) => Ok(signer),
            Signing::Stored(cell) => cell
                .get_or_try_init(|| key::stored_signer(storage))
                .await
                .map(|(signer, _)| signer),
        }
    }

    /// The keys tokens are verified with: the signing key's, then the key
    /// files' (each key once).
    pub async fn public_keys(&self, storage: &dyn Storage) -> ApiResult<Vec<&PublicKey>> {
        let own = self.signer(storage).await?.public();
        let mut keys = vec![own];
        keys.extend(self.verifying.iter().filter(|k| k.kid() != own.kid()));
        Ok(keys)
    }

    /// The claims of a token one of the keys signed, or why not.
    pub async fn verify(
        &self,
        token: &str,
        storage: &dyn Storage,
    ) -> ApiResult<Result<Value, String>> {
        Ok(key::verify(token, self.public_keys(storage).await?))
    }

    /// The verifying keys as a JSON Web Key set (`/openid/v1/jwks`).
    pub async fn jwks(&self, storage: &dyn Storage) -> ApiResult<Value> {
        let keys: Vec<Value> = self
            .public_keys(storage)
            .await?
            .into_iter()
            .map(PublicKey::jwk)
            .collect();
        Ok(json!({ "keys": keys }))
    }

    /// The algorithms of the verifying keys, each once, for the discovery
    /// document.
    pub async fn algorithms(&self, storage: &dyn Storage) -> ApiResult<Vec<&'static str>> {
        let mut names: Vec<&'static str> = self
            .public_keys(storage)
            .await?
            .into_iter()
            .map(|k| k.algorithm().name())
            .collect();
        names.sort_unstable();
        names.dedup();
        Ok(names)
    }
}
