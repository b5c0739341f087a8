//! The storage layer the registry reads and writes through: the backend
//! (`kapi_storage::Storage`, embedded or etcd) with the watch cache in front
//! of it, as k8s.io/apiserver's `storage/cacher/delegator.go` puts the cacher
//! in front of etcd3 (`var _ storage.Interface = (*CacheDelegator)(nil)`), so
//! the generic registry never sees the cache.
//!
//! [`CachedStore`] owns what reads have to agree on: the codec (objects are
//! written in one [`StorageMediaType`] and read in any), the consistency
//! rules (a consistent read waits for the cache to reach the backend's
//! revision, `0` reads whatever it holds, `NotOlderThan` waits for that
//! revision, `Exact` and a continuation whose snapshot is gone go to the
//! backend) and the fallback to the backend whenever the cache cannot answer
//! exactly what the backend would. A cache never changes an answer, only its
//! cost.
//!
//! Reads take a [`Scope`] and answer in its served version: an object of the
//! storage version is converted once for every reader of a version while the
//! cache keeps it.

mod current;
mod list;
mod predicate;
mod watch;
mod watch_backend;
mod watch_cached;
mod write;

use std::sync::Arc;

use bytes::Bytes;
use kapi_runtime::ResourceInfo;
use kapi_runtime::scheme::{KindEntry, Scheme};
use kapi_storage::{KeyValue, Storage};

use crate::api_error::{ApiError, ApiResult, Target};
use crate::body::Object;
use crate::cache::Caches;
use crate::scope::Scope;
use crate::stored::{StorageMediaType, codec, keys};

/// The object every read answers with: decoded at most once, encoded at most
/// once per wire form, and shared with the cache when it comes from there.
pub use crate::cache::Cached;
/// The counters of lists served from memory (see [`CachedStore::metrics`]).
pub use crate::cache::ListMetrics;
/// A cached object, decoded (see [`Cached::object`]).
pub use crate::cache::ObjectRef;
/// One resource's cache, for readers that walk all its objects (see
/// [`CachedStore::listed`]).
pub use crate::cache::ResourceCache;
pub use current::Current;
pub use list::{ListOptions, ListPage, parse_rv};
pub use predicate::{Matcher, matcher};
pub use watch::{WatchOptions, WatchStart};
pub use write::{Change, Outcome};

/// Which resources are read straight from the backend, never cached.
type Uncached = Arc<dyn Fn(&ResourceInfo) -> bool + Send + Sync>;

/// The backend with a watch cache per resource in front of it (started on a
/// resource's first read). Cheap to clone: clones share the caches.
#[derive(Clone)]
pub struct CachedStore {
    backend: Arc<dyn Storage>,
    caches: Arc<Caches>,
    /// The format objects are written in.
    media_type: StorageMediaType,
    uncached: Uncached,
    /// How long objects of a storage prefix live after each write (Events:
    /// `--event-ttl`); objects of the others live until deleted.
    expiring: Arc<Vec<(&'static str, std::time::Duration)>>,
}

impl CachedStore {
    /// A store over `backend`, writing objects as
    /// [`StorageMediaType::default`], caching every resource.
    pub fn new(backend: Arc<dyn Storage>) -> CachedStore {
        CachedStore {
            caches: Arc::new(Caches::new(backend.clone())),
            backend,
            media_type: StorageMediaType::default(),
            uncached: Arc::new(|_| false),
            expiring: Arc::default(),
        }
    }

    /// Lets objects kept under `storage_prefix` expire `ttl` after each
    /// write, as kube-apiserver's Events (`--event-ttl`): an etcd lease, or
    /// the embedded store's own expiry.
    pub fn with_expiry(
        mut self,
        storage_prefix: &'static str,
        ttl: std::time::Duration,
    ) -> CachedStore {
        let mut expiring = (*self.expiring).clone();
        expiring.retain(|(prefix, _)| *prefix != storage_prefix);
        expiring.push((storage_prefix, ttl));
        self.expiring = Arc::new(expiring);
        self
    }

    /// How long an object of `entry`'s kind lives after a write, if it
    /// expires.
    fn ttl(&self, entry: &KindEntry) -> Option<std::time::Duration> {
        self.expiring
            .iter()
            .find(|(prefix, _)| *prefix == entry.info.storage_prefix)
            .map(|(_, ttl)| *ttl)
    }

    /// Writes objects in `media_type` from now on (objects already stored
    /// stay readable in whatever format they were written).
    pub fn with_media_type(mut self, media_type: StorageMediaType) -> CachedStore {
        self.media_type = media_type;
        self
    }

    /// Reads the resources for which `uncached` holds from the backend only:
    /// those whose objects do not live in storage have nothing to cache.
    pub fn with_uncached(
        mut self,
        uncached: impl Fn(&ResourceInfo) -> bool + Send + Sync + 'static,
    ) -> CachedStore {
        self.uncached = Arc::new(uncached);
        self
    }

    /// The backend, for kinds' own use of storage (token keys, address
    /// allocations): objects are written through the store.
    pub fn backend(&self) -> &Arc<dyn Storage> {
        &self.backend
    }

    /// The format objects are written in.
    pub fn media_type(&self) -> StorageMediaType {
        self.media_type
    }

    /// `object` of `entry`'s kind as the backend stores it.
    fn encode(&self, entry: &KindEntry, object: &mut Object) -> ApiResult<Bytes> {
        self.media_type
            .encode(entry, object)
            .map_err(ApiError::internal)
    }

    /// The counters of what the caches served.
    pub fn metrics(&self) -> &ListMetrics {
        &self.caches.metrics
    }

    /// The number of `group`'s `resource` objects, where its cache knows it.
    pub fn object_count(&self, group: &str, resource: &str) -> Option<usize> {
        self.caches.count(group, resource)
    }

    /// Stops the caches' watches of the backend (at shutdown).
    pub fn stop(&self) {
        self.caches.stop();
    }

    /// Drops the caches of kinds `scheme` no longer serves as they were (a
    /// definition deleted or changed); a kind served again starts a new one.
    pub fn retain(&self, scheme: &Scheme) {
        self.caches.retain(scheme);
    }

    /// The cache of `entry`'s resource, started on first use and listed (or
    /// given up on) when this answers.
    pub async fn listed(&self, entry: &KindEntry) -> Arc<ResourceCache> {
        let cache = self.caches.of(entry);
        cache.listed().await;
        cache
    }

    /// Whether reads of `scope`'s kind may be served from its cache.
    fn cached(&self, scope: Scope<'_>) -> bool {
        !(self.uncached)(scope.info())
    }

    /// Reads one object (a consistent read), in the served version.
    pub async fn get(&self, scope: Scope<'_>, name: &str) -> ApiResult<Arc<Cached>> {
        let key = keys::object(scope.info(), scope.namespace, name);
        if let Some(found) = self.get_cached(scope, &key).await {
            let cached = found.ok_or_else(|| ApiError::not_found(scope.target(name)))?;
            return scope.to_served_cached(&cached);
        }
        let kv = self
            .backend
            .get(&key)
            .await
            .map_err(|e| ApiError::from_storage(e, scope.target(name)))?;
        let kv = kv.ok_or_else(|| ApiError::not_found(scope.target(name)))?;
        Ok(Cached::new(scope.to_served(decode(scope.entry, &kv)?)?))
    }

    /// A consistent read of one key from the cache, once it has reached the
    /// backend's current revision. Upstream reads a GET without
    /// resourceVersion from etcd; the answer is the same, and on etcd the
    /// revision costs less than the read: reads that arrive together share
    /// one request for it. The outer `None` when the cache cannot answer.
    async fn get_cached(&self, scope: Scope<'_>, key: &str) -> Option<Option<Arc<Cached>>> {
        if !self.cached(scope) {
            return None;
        }
        let cache = self.caches.of(scope.entry);
        if !cache.serves_consistent_reads() {
            return None;
        }
        let revision = self.current_revision().await.ok()?;
        if !cache.wait_fresh(revision).await {
            return None;
        }
        cache.get(key)
    }

    /// The backend's current revision, without a round trip where it can.
    pub async fn current_revision(&self) -> ApiResult<u64> {
        match self.backend.local_revision() {
            Some(revision) => Ok(revision),
            None => self
                .backend
                .current_revision()
                .await
                .map_err(|e| ApiError::from_storage(e, Target::NONE)),
        }
    }

    /// The revision the backend has compacted up to (reads before it are
    /// gone).
    async fn compacted_revision(&self) -> ApiResult<u64> {
        self.backend
            .compacted_revision()
            .await
            .map_err(|e| ApiError::from_storage(e, Target::NONE))
    }
}

/// Decodes a stored object of `entry`'s kind; corrupt data is an internal
/// error.
pub fn decode(entry: &KindEntry, kv: &KeyValue) -> ApiResult<Object> {
    codec::decode_stored(entry, kv).map_err(ApiError::internal)
}

#[cfg(test)]
mod tests;
