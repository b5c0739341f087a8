//! The watch cache (k8s.io/apiserver's cacher, in Rust terms): per resource,
//! the current objects in memory, a window of recent events, and one watch
//! of the store feeding both. Lists, consistent gets and watches are served
//! from it; each object and event is encoded once per wire form for all of
//! them. An object is decoded once as it arrives (or taken from the
//! server's own write of it, which hands it over), written as its JSON and
//! then kept as that JSON with what selectors and indexes read of it (its
//! labels, its kind's selectable fields); a reader that needs it decoded
//! (a write starting from it, admission, a controller, a table) decodes it
//! again.
//!
//! A cache never changes an answer, only its cost. A consistent read waits
//! until the cache has applied every change up to the store's current
//! revision (asking the store for progress meanwhile); a read the cache cannot
//! answer exactly (an `Exact` revision, a continuation whose snapshot is
//! gone, a watch from before the window, a store holding what cannot be
//! decoded) goes to the store as before.
//!
//! Caches start on first use, so a resource nobody reads costs nothing.

mod cached;
mod feed;
mod handoff;
mod index;
mod read;
mod state;
mod trigger;
mod watch;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use kapi_runtime::scheme::KindEntry;
use kapi_storage::{ProgressRequester, Storage};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use tokio::sync::watch as signal;

pub use cached::{Cached, Event, EventType, ObjectRef, json_frame_parts};
pub use index::IndexName;
pub use read::Page;
pub use state::{Objects, Snapshot};
pub use watch::{Start, Subscription, visible};

use state::State;

#[cfg(test)]
mod tests;

/// How long a consistent read waits for its cache to catch up before it goes
/// to the store (upstream's `waitUntilFreshAndBlock` timeout).
const FRESHNESS_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a read waits for a cache that has not finished its first list.
/// The cache starts on a resource's first read, and its first list decodes
/// what the store holds: reading the store beside it would decode everything a
/// second time and hold both copies at once, for no earlier answer.
const FIRST_LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// How often a waiting read asks the store for progress again (upstream's
/// progress requester ticks every 100 ms while anyone waits).
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Snapshots kept for the next pages of paged lists: at most this many ...
const SNAPSHOTS: usize = 16;

/// ... for at most this long; a later page reads the store at the first
/// page's revision.
const SNAPSHOT_TTL: Duration = Duration::from_secs(75);

/// Every resource's cache, started on first use.
pub struct Caches {
    storage: Arc<dyn Storage>,
    by_prefix: Mutex<HashMap<String, Arc<ResourceCache>>>,
    /// What the caches served.
    pub metrics: ListMetrics,
}

/// Lists served from the caches, counted as kube-apiserver counts them
/// (`apiserver_cache_list_total`, `apiserver_cache_list_returned_objects_total`).
#[derive(Clone, Default)]
pub struct ListMetrics {
    lists: Family<ListLabels, Counter>,
    returned: Family<PrefixLabels, Counter>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ListLabels {
    /// `f:<field>` or `l:<label>` for a list an index narrowed, else empty.
    index: String,
    resource_prefix: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PrefixLabels {
    resource_prefix: String,
}

impl ListMetrics {
    /// Adds the counters to `registry`, under kube-apiserver's names.
    pub fn register(&self, registry: &mut prometheus_client::registry::Registry) {
        registry.register(
            "apiserver_cache_list",
            "[ALPHA] Number of LIST requests served from watch cache",
            self.lists.clone(),
        );
        registry.register(
            "apiserver_cache_list_returned_objects",
            "[ALPHA] Number of objects returned for a LIST request from watch cache",
            self.returned.clone(),
        );
    }

    /// Counts a list of `cache` served from memory.
    fn served(&self, cache: &ResourceCache, index: Option<&IndexName>, returned: usize) {
        // The resource's keys without the store's root: `/configmaps`.
        let resource_prefix = cache
            .inner
            .prefix
            .trim_start_matches("/registry")
            .trim_end_matches('/')
            .to_owned();
        let index = index.map(ToString::to_string).unwrap_or_default();
        self.returned
            .get_or_create(&PrefixLabels {
                resource_prefix: resource_prefix.clone(),
            })
            .inc_by(returned as u64);
        self.lists
            .get_or_create(&ListLabels {
                index,
                resource_prefix,
            })
            .inc();
    }
}

impl Caches {
    /// No cache yet over `storage`.
    pub fn new(storage: Arc<dyn Storage>) -> Caches {
        Caches {
            storage,
            by_prefix: Mutex::default(),
            metrics: ListMetrics::default(),
        }
    }

    /// The cache of `entry`'s resource (all namespaces), started now if it
    /// has none. A kind defined at run time whose definition changed gets a
    /// new one: objects are decoded with its current schema.
    pub fn of(&self, entry: &KindEntry) -> Arc<ResourceCache> {
        let prefix = crate::stored::keys::prefix(entry.info, None);
        let mut caches = self
            .by_prefix
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(cache) = current(&caches, &prefix, entry) {
            return cache;
        }
        let cache = Arc::new(ResourceCache::start(
            self.storage.clone(),
            entry.clone(),
            prefix.clone(),
        ));
        caches.insert(prefix, cache.clone());
        cache
    }

    /// The cache of `entry`'s resource if it has started (and is of the
    /// kind as it is now), without starting one.
    pub fn started(&self, entry: &KindEntry) -> Option<Arc<ResourceCache>> {
        let prefix = crate::stored::keys::prefix(entry.info, None);
        let caches = self
            .by_prefix
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        current(&caches, &prefix, entry)
    }

    /// How many objects the cache of `group`'s `resource` holds, where one
    /// has started and listed (the object count upstream's work estimator
    /// reads).
    pub fn count(&self, group: &str, resource: &str) -> Option<usize> {
        let caches = self
            .by_prefix
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let cache = caches.values().find(|c| {
            let info = c.inner.entry.info;
            info.plural == resource && info.group == group
        })?;
        let state = cache.inner.read();
        state.ready.then(|| state.objects.len())
    }

    /// Stops the caches of kinds `scheme` no longer serves as they were
    /// (the same operations: a custom kind whose definition changed has new
    /// ones).
    pub fn retain(&self, scheme: &kapi_runtime::scheme::Scheme) {
        self.by_prefix
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, cache| {
                let info = cache.inner.entry.info;
                scheme
                    .get(info.group, info.version, info.plural)
                    .is_some_and(|entry| Arc::ptr_eq(&entry.ops, &cache.inner.entry.ops))
            });
    }

    /// Stops every cache's watch of the store.
    pub fn stop(&self) {
        self.by_prefix
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// The cache at `prefix` among `caches`, if it is of `entry`'s kind as it is
/// now (a redefined custom resource starts a cache of its own).
fn current(
    caches: &HashMap<String, Arc<ResourceCache>>,
    prefix: &str,
    entry: &KindEntry,
) -> Option<Arc<ResourceCache>> {
    caches
        .get(prefix)
        .filter(|cache| Arc::ptr_eq(&cache.inner.entry.ops, &entry.ops))
        .cloned()
}

/// One resource's cache; dropping it stops its watch of the store.
pub struct ResourceCache {
    inner: Arc<Inner>,
    feed: tokio::task::AbortHandle,
}

/// What the cache and its feed task share.
pub(crate) struct Inner {
    /// The kind in its storage version.
    entry: KindEntry,
    /// `/registry/<resource>/`.
    prefix: String,
    state: RwLock<State>,
    /// The revision the cache has reached; `None` until its first list.
    revision: signal::Sender<Option<u64>>,
    progress: Mutex<ProgressRequester>,
    /// Whether the feed's progress serves consistent reads.
    consistent: AtomicBool,
    /// Whether an attempt at the first list failed (the store is down or
    /// refused): readers then go to the store instead of waiting for it.
    first_list_failed: AtomicBool,
    /// Snapshots of paged lists by revision, oldest first.
    snapshots: Mutex<VecDeque<(Instant, Snapshot)>>,
    /// What the server's own writes stored, for their events.
    handoffs: Mutex<handoff::Handoffs>,
    /// Told when a write hands its object over or ends.
    handed: tokio::sync::Notify,
    /// How many events took their object from its writer.
    handed_over: AtomicU64,
}

impl Inner {
    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells waiting readers (and bookmarks) how far the cache has got.
    fn publish(&self, revision: u64) {
        self.revision.send_replace(Some(revision));
    }

    fn handoffs(&self) -> std::sync::MutexGuard<'_, handoff::Handoffs> {
        self.handoffs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set_progress(&self, requester: ProgressRequester, consistent: bool) {
        *self.progress.lock().unwrap_or_else(PoisonError::into_inner) = requester;
        self.consistent.store(consistent, Ordering::Release);
    }

    fn request_progress(&self, revision: u64) {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .request(revision);
    }
}

impl ResourceCache {
    fn start(storage: Arc<dyn Storage>, entry: KindEntry, prefix: String) -> ResourceCache {
        let state = State::new(entry.info.indexed_fields);
        let inner = Arc::new(Inner {
            entry,
            prefix,
            state: RwLock::new(state),
            revision: signal::channel(None).0,
            progress: Mutex::new(ProgressRequester::none()),
            consistent: AtomicBool::new(false),
            first_list_failed: AtomicBool::new(false),
            snapshots: Mutex::default(),
            handoffs: Mutex::default(),
            handed: tokio::sync::Notify::new(),
            handed_over: AtomicU64::new(0),
        });
        let feed = tokio::spawn(feed::run(inner.clone(), storage)).abort_handle();
        ResourceCache { inner, feed }
    }

    /// The kind in its storage version.
    pub fn entry(&self) -> &KindEntry {
        &self.inner.entry
    }

    /// Whether the cache can serve consistent reads: its store tells it
    /// exactly how far it has got (see `kapi_storage::Feed::consistent`).
    /// Other reads are served whatever this says.
    pub fn serves_consistent_reads(&self) -> bool {
        self.inner.consistent.load(Ordering::Acquire)
    }

    /// Waits for the cache's first list of the store, for at most
    /// `FIRST_LIST_TIMEOUT`; false when it has not listed by then, or when an
    /// attempt at it failed. Until then the cache cannot tell whether it
    /// serves consistent reads.
    pub async fn listed(&self) -> bool {
        let mut reached = self.inner.revision.subscribe();
        if reached.borrow().is_some() {
            return true;
        }
        if self.inner.first_list_failed.load(Ordering::Acquire) {
            return false;
        }
        let listed = reached.wait_for(Option::is_some);
        matches!(
            tokio::time::timeout(FIRST_LIST_TIMEOUT, listed).await,
            Ok(Ok(_))
        )
    }

    /// Waits until the cache has applied every change up to `revision` (and
    /// has listed the store at all, for `0`). False when it did not get there
    /// within `FRESHNESS_TIMEOUT`: the read then goes to the store.
    pub async fn wait_fresh(&self, revision: u64) -> bool {
        let mut reached = self.inner.revision.subscribe();
        let fresh = |r: &Option<u64>| r.is_some_and(|r| r >= revision);
        if fresh(&reached.borrow()) {
            return true;
        }
        let deadline = Instant::now() + FRESHNESS_TIMEOUT;
        loop {
            self.inner.request_progress(revision);
            let wait = tokio::time::timeout(PROGRESS_EVERY, reached.wait_for(fresh));
            match wait.await {
                Ok(outcome) => return outcome.is_ok(),
                Err(_) if Instant::now() >= deadline => return false,
                Err(_) => {}
            }
        }
    }

    /// Notes that the server writes `key` until the guard is dropped: the
    /// event of that key waits (briefly) for the write's
    /// [`Writing::offer`].
    pub fn writing(&self, key: &str) -> Writing {
        self.inner.handoffs().start_write(key);
        Writing {
            inner: self.inner.clone(),
            key: key.into(),
        }
    }

    /// How many events took their object from the write that stored it
    /// rather than decoding it.
    pub fn handed_over(&self) -> u64 {
        self.inner.handed_over.load(Ordering::Relaxed)
    }

    /// The revision the cache has reached, `None` before its first list.
    pub fn revision(&self) -> signal::Receiver<Option<u64>> {
        self.inner.revision.subscribe()
    }

    /// The objects now, or `None` while the cache cannot answer for all of
    /// them (before its first list, or holding what it cannot decode).
    pub fn snapshot(&self) -> Option<Snapshot> {
        let state = self.inner.read();
        (state.ready && state.undecodable.is_empty()).then(|| state.snapshot())
    }

    /// The objects now (without the indexes a [`Snapshot`] also takes), or
    /// `None` while the cache cannot answer for all of them.
    pub fn objects(&self) -> Option<Objects> {
        let state = self.inner.read();
        (state.ready && state.undecodable.is_empty()).then(|| state.objects.clone())
    }

    /// The object at `key` now; the outer `None` when the cache cannot say.
    pub fn get(&self, key: &str) -> Option<Option<Arc<Cached>>> {
        let state = self.inner.read();
        if !state.ready || state.undecodable.contains(key) {
            return None;
        }
        Some(state.objects.get(key).cloned())
    }

    /// Counts a page of a list served from this cache in `metrics`.
    pub fn count_list(&self, metrics: &ListMetrics, page: &Page) {
        metrics.served(self, page.index.as_ref(), page.items.len());
    }

    /// Keeps `snapshot` for the next pages of a paged list.
    pub fn keep_snapshot(&self, snapshot: &Snapshot) {
        let mut kept = self
            .inner
            .snapshots
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        kept.retain(|(at, _)| at.elapsed() < SNAPSHOT_TTL);
        if kept.iter().any(|(_, s)| s.revision == snapshot.revision) {
            return;
        }
        if kept.len() == SNAPSHOTS {
            kept.pop_front();
        }
        kept.push_back((Instant::now(), snapshot.clone()));
    }

    /// The snapshot kept at `revision`, for a continued list.
    pub fn kept_snapshot(&self, revision: u64) -> Option<Snapshot> {
        let kept = self
            .inner
            .snapshots
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        kept.iter()
            .find(|(at, s)| s.revision == revision && at.elapsed() < SNAPSHOT_TTL)
            .map(|(_, s)| s.clone())
    }
}

/// A write under way (see [`ResourceCache::writing`]).
pub struct Writing {
    inner: Arc<Inner>,
    key: Box<str>,
}

impl Writing {
    /// Hands the cache `object`, which the write stored at `revision` (its
    /// resourceVersion stamped): the write's event takes it rather than
    /// decoding what was stored.
    pub fn offer(&self, revision: u64, object: &Arc<Cached>) {
        self.inner.handoffs().offer(&self.key, revision, object);
        self.inner.handed.notify_waiters();
    }
}

impl Drop for Writing {
    fn drop(&mut self) {
        self.inner.handoffs().end_write(&self.key);
        self.inner.handed.notify_waiters();
    }
}

impl Drop for ResourceCache {
    fn drop(&mut self) {
        self.feed.abort();
    }
}
