//! kube-apiserver's token cache: a token's successful authentication (its
//! user, audiences and notes) is remembered for ten seconds, so a client
//! sending the same token again is not verified (signature, bound objects)
//! each time. Failures are not remembered, as upstream's default.
//!
//! Entries are keyed by a salted SHA-256 of the audiences and the token: the
//! tokens themselves are not kept.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use ring::rand::{SecureRandom, SystemRandom};
use sha2::{Digest, Sha256};

use super::TokenVerdict;

/// How long a success is remembered.
const SUCCESS_TTL: Duration = Duration::from_secs(10);
/// How many tokens are remembered at most.
const CAPACITY: usize = 4096;

/// The cache.
#[derive(Debug)]
pub struct TokenCache {
    salt: [u8; 32],
    entries: Mutex<HashMap<[u8; 32], (Instant, TokenVerdict)>>,
}

impl Default for TokenCache {
    fn default() -> TokenCache {
        let mut salt = [0; 32];
        // Without randomness the salt stays zero: keys are still hashes.
        let _ = SystemRandom::new().fill(&mut salt);
        TokenCache {
            salt,
            entries: Mutex::default(),
        }
    }
}

/// A cache key.
pub type Key = [u8; 32];

impl TokenCache {
    /// The key of `token` asked for `audiences`.
    pub fn key(&self, token: &str, audiences: &[String]) -> Key {
        let mut hash = Sha256::new();
        hash.update(self.salt);
        for audience in audiences {
            hash.update((audience.len() as u64).to_be_bytes());
            hash.update(audience.as_bytes());
        }
        hash.update(u64::MAX.to_be_bytes());
        hash.update(token.as_bytes());
        hash.finalize().into()
    }

    /// The remembered verdict, if fresh.
    pub fn get(&self, key: &Key) -> Option<TokenVerdict> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let (at, verdict) = entries.get(key)?;
        (at.elapsed() < SUCCESS_TTL).then(|| verdict.clone())
    }

    /// Remembers a successful verdict.
    pub fn insert(&self, key: Key, verdict: TokenVerdict) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= CAPACITY {
            entries.retain(|_, (at, _)| at.elapsed() < SUCCESS_TTL);
            if entries.len() >= CAPACITY {
                entries.clear();
            }
        }
        entries.insert(key, (Instant::now(), verdict));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authn::Notes;
    use crate::user::UserInfo;
    use std::sync::Arc;

    #[test]
    fn a_success_is_remembered_per_token_and_audiences() {
        let cache = TokenCache::default();
        let api = vec!["api".to_owned()];
        let key = cache.key("t", &api);
        assert_eq!(cache.get(&key), None);
        let verdict = TokenVerdict::User(
            Arc::new(UserInfo::new("alice", &[])),
            api.clone(),
            Notes::default(),
        );
        cache.insert(key, verdict.clone());
        assert_eq!(cache.get(&key), Some(verdict));
        assert_eq!(cache.get(&cache.key("t", &["other".to_owned()])), None);
        assert_eq!(cache.get(&cache.key("u", &api)), None);
        // Audiences and token do not run together.
        assert_ne!(
            cache.key("bt", &["a".to_owned()]),
            cache.key("t", &["ab".to_owned()])
        );
    }
}
