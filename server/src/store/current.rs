//! The read side of a guaranteed update: the object an attempt starts from,
//! the backend's, or the watch cache's copy (upstream's
//! `cachedExistingObject` of GuaranteedUpdate), which saves the first read of
//! the backend and its decoding. A cached copy may be stale: anything it
//! leads to short of a successful write (a conflict, a refusal, a write that
//! would change nothing) sends the attempt back to the backend, so the answer
//! is the backend's.

use std::sync::{Arc, OnceLock};

use kapi_runtime::scheme::KindEntry;
use kapi_storage::KeyValue;

use super::{Cached, CachedStore, decode};
use crate::api_error::{ApiError, ApiResult, Target};
use crate::body::Object;
use crate::scope::Scope;
use crate::stored::StorageMediaType;

/// Where an attempt's current object comes from.
pub enum Current {
    /// Read from the backend now.
    Stored(KeyValue),
    /// The watch cache's copy, possibly behind the store (at this
    /// revision), and the object as the first read of it decoded it: the
    /// cache keeps it as its JSON.
    Cached(Arc<Cached>, u64, OnceLock<Object>),
}

impl CachedStore {
    /// A first guess at the object at `key` for a read-modify-write: the
    /// cache's copy, when the kind's cache has started and holds it (a cache
    /// is not started for an update alone). It may be behind the backend.
    pub fn current_hint(&self, scope: Scope<'_>, key: &str) -> Option<Current> {
        if !self.cached(scope) {
            return None;
        }
        let cached = self.caches.started(scope.entry)?.get(key)??;
        let revision = cached.revision()?;
        Some(Current::Cached(cached, revision, OnceLock::new()))
    }

    /// The object at `key` as the backend holds it now; `None` when there
    /// is none.
    pub async fn current(&self, key: &str, target: Target<'_>) -> ApiResult<Option<Current>> {
        let kv = self
            .backend
            .get(key)
            .await
            .map_err(|e| ApiError::from_storage(e, target))?;
        Ok(kv.map(Current::Stored))
    }
}

impl Current {
    /// Whether the copy may be behind the store.
    pub fn may_be_stale(&self) -> bool {
        matches!(self, Current::Cached(..))
    }

    /// The object's revision (its resourceVersion).
    pub fn revision(&self) -> u64 {
        match self {
            Current::Stored(kv) => kv.mod_revision,
            Current::Cached(_, revision, _) => *revision,
        }
    }

    /// The object, decoded or copied.
    pub fn object(&self, entry: &KindEntry) -> ApiResult<Object> {
        match self {
            Current::Stored(kv) => decode(entry, kv),
            Current::Cached(cached, _, decoded) => {
                if let Some(object) = decoded.get() {
                    return Ok(object.clone());
                }
                let object = Object::clone(&*cached.object().map_err(ApiError::internal)?);
                Ok(decoded.get_or_init(|| object).clone())
            }
        }
    }

    /// Whether writing `bytes` would store what is stored already (a cached
    /// copy is encoded as the backend would hold it).
    pub fn holds(&self, bytes: &[u8], media_type: StorageMediaType, entry: &KindEntry) -> bool {
        match self {
            Current::Stored(kv) => kv.value == bytes,
            Current::Cached(..) => {
                let Ok(mut object) = self.object(entry) else {
                    return false;
                };
                media_type
                    .encode(entry, &mut object)
                    .is_ok_and(|stored| stored == bytes)
            }
        }
    }
}
