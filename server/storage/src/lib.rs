//! The storage contract of kapi and its two backends: the embedded store (the
//! default) and etcd (several kapi replicas sharing one etcd cluster).
//!
//! [`Storage`] mirrors k8s.io/apiserver's `storage.Interface`, narrowed to bytes:
//! values are opaque bytes (the server writes each object in its storage encoding, JSON or protobuf), and every value carries the
//! store-wide revision at which it was last written (`mod_revision`), exactly like
//! etcd's mod revision. That revision is what Kubernetes calls `resourceVersion`.
//! It is never stored inside the value.

pub mod embedded;
mod error;
pub mod etcd;
pub mod watch_filter;

pub use error::StorageError;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;

/// One stored key with its value and revisions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyValue {
    /// Full key, e.g. `/registry/configmaps/default/app`.
    pub key: String,
    /// The value as written.
    pub value: Bytes,
    /// Revision of the write that created the key (its current incarnation).
    pub create_revision: u64,
    /// Revision of the last write to the key; the object's resourceVersion.
    pub mod_revision: u64,
}

/// A filter applied inside the store while listing or watching, so that a `limit`
/// counts only matching items (Kubernetes' SelectionPredicate).
pub type Predicate = std::sync::Arc<dyn Fn(&KeyValue) -> bool + Send + Sync>;

/// Options of [`Storage::list`].
#[derive(Clone, Default)]
pub struct ListOptions {
    /// Read at this revision; `0` reads at the current revision.
    pub revision: u64,
    /// At most this many matching items; `0` means no limit.
    pub limit: usize,
    /// Start strictly after this key (from a continue token).
    pub start_after: Option<String>,
    /// Only items for which this returns true are returned and counted.
    pub predicate: Option<Predicate>,
}

/// The answer of [`Storage::list`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListResult {
    /// Matching items in key order.
    pub items: Vec<KeyValue>,
    /// The revision the list was read at (pin later pages to it).
    pub revision: u64,
    /// The last key returned when the limit cut the list short: the next page
    /// starts after it. `None` when the list is complete.
    pub continue_after: Option<String>,
    /// How many items remain after this page, when cheaply known (Kubernetes'
    /// remainingItemCount); `None` when unknown or when the list is complete.
    pub remaining: Option<u64>,
}

/// What happened to a key, as seen by a watcher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchEvent {
    /// The key was created at `kv.mod_revision`.
    Added(KeyValue),
    /// The key was updated; `prev` is the value before.
    Modified { kv: KeyValue, prev: KeyValue },
    /// The key was deleted at `revision`; `prev` is the last value it had.
    Deleted { prev: KeyValue, revision: u64 },
    /// Nothing changed under the watched prefix up to and including `revision`:
    /// every later event has a higher revision. Lets a watcher advance its
    /// resourceVersion while idle (the server sends it as a BOOKMARK), so that
    /// it can resume from a recent revision instead of one that gets compacted.
    /// Backends emit it when they can (etcd's progress notifications); the
    /// embedded store does not.
    Progress { revision: u64 },
}

impl WatchEvent {
    /// The revision at which the event happened.
    pub fn revision(&self) -> u64 {
        match self {
            WatchEvent::Added(kv) => kv.mod_revision,
            WatchEvent::Modified { kv, .. } => kv.mod_revision,
            WatchEvent::Deleted { revision, .. } => *revision,
            WatchEvent::Progress { revision } => *revision,
        }
    }

    /// The key the event is about; the empty string for
    /// [`WatchEvent::Progress`], which is about no key.
    pub fn key(&self) -> &str {
        match self {
            WatchEvent::Added(kv) => &kv.key,
            WatchEvent::Modified { kv, .. } => &kv.key,
            WatchEvent::Deleted { prev, .. } => &prev.key,
            WatchEvent::Progress { .. } => "",
        }
    }
}

/// A stream of watch events in revision order. An `Err` item ends the stream
/// (e.g. [`StorageError::Expired`] when the watcher fell too far behind).
pub type WatchStream = BoxStream<'static, Result<WatchEvent, StorageError>>;

/// A watch that feeds a cache: every event under a prefix, and progress
/// reports that let the cache know how far the store has gone while nothing
/// under its prefix changes.
pub struct Feed {
    /// The events, [`WatchEvent::Progress`] included.
    pub events: WatchStream,
    /// Asks for a progress report soon.
    pub progress: ProgressRequester,
    /// Whether the feed's progress is exact enough for consistent reads: a
    /// cache that reached the store's current revision through it holds
    /// every change up to there.
    pub consistent: bool,
}

/// Asks a [`Feed`] for a [`WatchEvent::Progress`] once it has reached a
/// revision. A cache that serves a consistent read calls it while it waits to
/// reach the revision the store reported.
#[derive(Clone, Default)]
pub struct ProgressRequester(Option<std::sync::Arc<ProgressWanted>>);

/// What a feed's reader asked for: the highest revision it waits for, and the
/// signal that wakes the feed to look.
pub(crate) struct ProgressWanted {
    revision: std::sync::atomic::AtomicU64,
    wake: std::sync::Arc<tokio::sync::Notify>,
}

impl ProgressWanted {
    /// The highest revision asked for so far.
    pub(crate) fn revision(&self) -> u64 {
        self.revision.load(std::sync::atomic::Ordering::Acquire)
    }
}

impl ProgressRequester {
    /// A requester for a feed that reports progress by itself (or never):
    /// asking does nothing.
    pub fn none() -> ProgressRequester {
        ProgressRequester(None)
    }

    /// A requester, and what its feed reads; each request signals `wake`.
    pub(crate) fn new(
        wake: std::sync::Arc<tokio::sync::Notify>,
    ) -> (ProgressRequester, std::sync::Arc<ProgressWanted>) {
        let wanted = std::sync::Arc::new(ProgressWanted {
            revision: std::sync::atomic::AtomicU64::new(0),
            wake,
        });
        (ProgressRequester(Some(wanted.clone())), wanted)
    }

    /// Asks for a progress report once the feed has handed over every event
    /// up to `revision`; requests made before it got there are merged.
    pub fn request(&self, revision: u64) {
        if let Some(wanted) = &self.0 {
            wanted
                .revision
                .fetch_max(revision, std::sync::atomic::Ordering::AcqRel);
            wanted.wake.notify_one();
        }
    }
}

/// What a guaranteed-update closure decided.
pub enum Update {
    /// Write this value (skipped when it equals the current value).
    Write(Bytes),
    /// Delete the key.
    Delete,
    /// Leave the key as it is.
    Keep,
}

/// The narrow storage contract every backend implements; one conformance suite
/// (`tests/conformance/mod.rs`) runs against each of them.
#[async_trait]
pub trait Storage: Send + Sync + 'static {
    /// Reads one key at the current revision.
    async fn get(&self, key: &str) -> Result<Option<KeyValue>, StorageError>;

    /// Lists the keys under `prefix` (which should end with `/`).
    async fn list(&self, prefix: &str, opts: ListOptions) -> Result<ListResult, StorageError>;

    /// Creates a key; fails with [`StorageError::AlreadyExists`] when it exists.
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue, StorageError>;

    /// Replaces a key if its mod revision is still `expected_revision`;
    /// [`StorageError::Conflict`] otherwise, [`StorageError::NotFound`] when gone.
    /// Writing a value equal to the current one writes nothing and returns it.
    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_revision: u64,
    ) -> Result<KeyValue, StorageError>;

    /// [`Storage::create`] of a key the store deletes by itself `ttl` after
    /// this write (or a little later), unless it is written again: an etcd
    /// lease, as kube-apiserver writes Events (`--event-ttl`). Its expiry is
    /// a delete like any other, seen by watches.
    async fn create_expiring(
        &self,
        key: &str,
        value: Bytes,
        ttl: std::time::Duration,
    ) -> Result<KeyValue, StorageError>;

    /// [`Storage::update`] that leaves the key to expire `ttl` after this
    /// write. (A plain update that writes keeps the key for good, as a put
    /// without a lease does in etcd; an update that changes nothing writes
    /// nothing and leaves the key's expiry as it was, in both.)
    async fn update_expiring(
        &self,
        key: &str,
        value: Bytes,
        expected_revision: u64,
        ttl: std::time::Duration,
    ) -> Result<KeyValue, StorageError>;

    /// Deletes a key, if given only while its mod revision is `expected_revision`.
    /// Returns the last value it had.
    async fn delete(
        &self,
        key: &str,
        expected_revision: Option<u64>,
    ) -> Result<KeyValue, StorageError>;

    /// Watches keys under `prefix` for events strictly after `from_revision`.
    /// A revision older than the compacted one fails with [`StorageError::Expired`].
    async fn watch(
        &self,
        prefix: &str,
        from_revision: u64,
        predicate: Option<Predicate>,
    ) -> Result<WatchStream, StorageError>;

    /// The revision of the last committed write.
    async fn current_revision(&self) -> Result<u64, StorageError>;

    /// Everything under `prefix` now, and a watch of it from there for a
    /// watch cache: besides the events it reports progress (see [`Feed`]).
    /// The default lists, then watches from the list's revision; its progress
    /// comes only as the backend sends it by itself.
    async fn list_and_feed(&self, prefix: &str) -> Result<(ListResult, Feed), StorageError> {
        let list = self.list(prefix, ListOptions::default()).await?;
        let feed = Feed {
            events: self.watch(prefix, list.revision, None).await?,
            progress: ProgressRequester::none(),
            consistent: false,
        };
        Ok((list, feed))
    }

    /// The current revision, when the store knows it without a round trip
    /// (the embedded store, where it is the process's own); `None` for a
    /// remote store. A cache uses it to serve consistent reads from memory
    /// where asking the store costs as much as the read itself.
    fn local_revision(&self) -> Option<u64> {
        None
    }

    /// The oldest revision still readable (everything before it is compacted).
    async fn compacted_revision(&self) -> Result<u64, StorageError>;

    /// Forgets history older than `revision`: lists at and watches from older
    /// revisions get [`StorageError::Expired`] afterwards.
    async fn compact(&self, revision: u64) -> Result<(), StorageError>;

    /// The backend's name as a component of the control plane (`etcd`,
    /// `embedded`): ComponentStatus reports it as `<name>-0`.
    fn backend_name(&self) -> &'static str {
        "storage"
    }

    /// Whether the backend can serve requests (for `/readyz`).
    async fn ready(&self) -> Result<(), StorageError> {
        self.current_revision().await.map(|_| ())
    }

    /// Read-modify-write with optimistic concurrency, retried on conflict:
    /// k8s.io/apiserver's GuaranteedUpdate. `try_update` sees the current value
    /// (`None` when the key does not exist) and decides what to write; it may be
    /// called several times. Returns the key as it is afterwards (`None` when
    /// deleted or absent).
    ///
    /// Like upstream it retries for as long as it meets conflicts: a conflict
    /// means another writer succeeded, so the system as a whole progresses, and a
    /// fixed cap would fail callers that merely lost a few races under load.
    async fn guaranteed_update(
        &self,
        key: &str,
        // The explicit `for<'kv>` keeps async_trait from tying the argument's
        // lifetime to the call's, which would not compile.
        try_update: &mut (
                 dyn for<'kv> FnMut(Option<&'kv KeyValue>) -> Result<Update, StorageError> + Send
             ),
    ) -> Result<Option<KeyValue>, StorageError> {
        self.guaranteed_update_expiring(key, None, try_update).await
    }

    /// [`Storage::guaranteed_update`] whose writes leave the key to expire
    /// `ttl` after them (when given), as [`Storage::update_expiring`].
    async fn guaranteed_update_expiring(
        &self,
        key: &str,
        ttl: Option<std::time::Duration>,
        try_update: &mut (
                 dyn for<'kv> FnMut(Option<&'kv KeyValue>) -> Result<Update, StorageError> + Send
             ),
    ) -> Result<Option<KeyValue>, StorageError> {
        loop {
            let current = self.get(key).await?;
            let outcome = match (try_update(current.as_ref())?, current) {
                (Update::Keep, current) => return Ok(current),
                (Update::Write(value), None) => match ttl {
                    Some(ttl) => self.create_expiring(key, value, ttl).await.map(Some),
                    None => self.create(key, value).await.map(Some),
                },
                (Update::Write(value), Some(cur)) => {
                    if cur.value == value {
                        return Ok(Some(cur));
                    }
                    match ttl {
                        Some(ttl) => self
                            .update_expiring(key, value, cur.mod_revision, ttl)
                            .await
                            .map(Some),
                        None => self.update(key, value, cur.mod_revision).await.map(Some),
                    }
                }
                (Update::Delete, None) => return Err(StorageError::NotFound(key.to_owned())),
                (Update::Delete, Some(cur)) => {
                    self.delete(key, Some(cur.mod_revision)).await.map(|_| None)
                }
            };
            // Each of these means another writer got there first (NotFound: it
            // deleted the key we were updating); the next attempt sees its result.
            match outcome {
                Err(StorageError::Conflict(_))
                | Err(StorageError::AlreadyExists(_))
                | Err(StorageError::NotFound(_)) => continue,
                other => return other,
            }
        }
    }
}
