//! The object an update attempt starts from: the store's, or the watch
//! cache's copy (upstream's `cachedExistingObject` of GuaranteedUpdate),
//! which saves the first read of the store and its decoding. A cached copy
//! may be stale: anything it leads to short of a successful write (a
//! conflict, a refusal, a write that would change nothing) sends the
//! attempt back to the store, so the answer is the store's.

use std::sync::{Arc, OnceLock};

use kapi_runtime::scheme::KindEntry;
use kapi_storage::KeyValue;

use super::{Object, decode};
use crate::api_error::{ApiError, ApiResult};
use crate::cache::{Cached, Caches};
use crate::stored::StorageMediaType;

/// Where an attempt's current object comes from.
pub(super) enum Current {
    /// Read from the store now.
    Stored(KeyValue),
    /// The watch cache's copy, possibly behind the store (at this
    /// revision), and the object as the first read of it decoded it: the
    /// cache keeps it as its JSON.
    Cached(Arc<Cached>, u64, OnceLock<Object>),
}

impl Current {
    /// The cache's copy of `key`, when the kind's cache has started and
    /// holds it (a cache is not started for an update alone).
    pub(super) fn from_cache(caches: &Caches, entry: &KindEntry, key: &str) -> Option<Current> {
        let cached = caches.started(entry)?.get(key)??;
        let revision = cached.revision()?;
        Some(Current::Cached(cached, revision, OnceLock::new()))
    }

    /// Whether the copy may be behind the store.
    pub(super) fn may_be_stale(&self) -> bool {
        matches!(self, Current::Cached(..))
    }

    /// The object's revision (its resourceVersion).
    pub(super) fn revision(&self) -> u64 {
        match self {
            Current::Stored(kv) => kv.mod_revision,
            Current::Cached(_, revision, _) => *revision,
        }
    }

    /// The object, decoded or copied.
    pub(super) fn object(&self, entry: &KindEntry) -> ApiResult<Object> {
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
    /// copy is encoded as the store would hold it).
    pub(super) fn holds(
        &self,
        bytes: &[u8],
        media_type: StorageMediaType,
        entry: &KindEntry,
    ) -> bool {
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
