//! The embedded backend: a persistent, crash-safe store in one data directory.
//!
//! It follows kine's model of etcd on a plain database: a store-wide revision that
//! only grows, every version of every key kept by (key, revision) until compaction,
//! and a revision log that watches replay. The database is redb: pure Rust, ACID
//! transactions whose commits are fsync'd, and MVCC readers that the writer never
//! blocks, so lists read a consistent snapshot while writes go on.
//!
//! All writes go through one writer thread that commits them in groups (see
//! `writer.rs`); reads run on tokio's blocking pool, because redb calls block.

mod apply;
mod compact;
mod read;
mod schema;
mod watch;
mod writer;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use async_trait::async_trait;
use bytes::Bytes;
use redb::Database;

use self::writer::{Op, Writer};
use crate::{
    Feed, KeyValue, ListOptions, ListResult, Predicate, ProgressRequester, Storage, StorageError,
    WatchStream,
};

/// The database file inside the data directory.
pub const DATABASE_FILE: &str = "kapi.redb";

/// Tuning of an [`EmbeddedStore`]; the defaults suit a server.
#[derive(Clone, Debug)]
pub struct EmbeddedOptions {
    /// How many committed batches of events a watcher may fall behind before its
    /// stream ends with [`StorageError::Expired`] (it then relists, as after
    /// etcd's compaction), so a stuck watcher cannot hold memory without bound.
    pub watch_buffer: usize,
    /// The bytes of pages the database keeps in memory (read cache and write
    /// buffer together). The server answers most reads from its watch cache,
    /// so the store's own cache needs to hold little more than the B-tree's
    /// upper levels and the pages being written; the file's pages beyond it
    /// stay in the kernel's page cache, which is not the process's memory.
    /// With redb's own default, 1 GiB, a server held 244 MiB after 50,000
    /// pods were created; with this one, 97 MiB (BENCHMARKS.md).
    pub cache_bytes: usize,
}

impl Default for EmbeddedOptions {
    fn default() -> Self {
        EmbeddedOptions {
            watch_buffer: 4096,
            cache_bytes: 64 << 20,
        }
    }
}

/// The embedded [`Storage`] backend: kapi's default, needing nothing but a data
/// directory. Cheap to clone; all clones share one database and one writer. The
/// file is closed when the last clone and the last watch stream are dropped.
#[derive(Clone)]
pub struct EmbeddedStore {
    shared: Arc<Shared>,
    writer: Arc<Writer>,
}

/// What readers, the writer and watch streams share.
pub(super) struct Shared {
    db: Database,
    /// The last committed revision, published by the writer after each commit.
    revision: AtomicU64,
    /// The compacted revision, published by the writer after each commit.
    compacted: AtomicU64,
}

impl EmbeddedStore {
    /// Opens (or creates) the store in `dir`, in the file [`DATABASE_FILE`].
    ///
    /// Blocking: call it before serving, or from `spawn_blocking`. Fails with
    /// [`StorageError::Unavailable`] when another process has the store open.
    pub fn open(dir: &Path) -> Result<EmbeddedStore, StorageError> {
        Self::open_with(dir, EmbeddedOptions::default())
    }

    /// [`EmbeddedStore::open`] with explicit options.
    pub fn open_with(dir: &Path, options: EmbeddedOptions) -> Result<EmbeddedStore, StorageError> {
        std::fs::create_dir_all(dir).map_err(|e| {
            StorageError::Unavailable(format!("cannot create {}: {e}", dir.display()))
        })?;
        let path = dir.join(DATABASE_FILE);
        let db = Database::builder()
            .set_cache_size(options.cache_bytes)
            .create(&path)
            .map_err(|e| match e {
                redb::DatabaseError::DatabaseAlreadyOpen => StorageError::Unavailable(format!(
                    "{} is already open (another kapi running?)",
                    path.display()
                )),
                other => schema::db_err(other),
            })?;
        let (revision, compacted) = initialize(&db)?;
        let shared = Arc::new(Shared {
            db,
            revision: AtomicU64::new(revision),
            compacted: AtomicU64::new(compacted),
        });
        let writer = Writer::start(shared.clone(), options.watch_buffer)?;
        writer.start_expiry()?;
        Ok(EmbeddedStore {
            shared,
            writer: Arc::new(writer),
        })
    }

    /// Runs a read on tokio's blocking pool: redb reads may wait on the disk.
    async fn read<T, F>(&self, read: F) -> Result<T, StorageError>
    where
        T: Send + 'static,
        F: FnOnce(&Database) -> Result<T, StorageError> + Send + 'static,
    {
        let shared = self.shared.clone();
        tokio::task::spawn_blocking(move || read(&shared.db))
            .await
            .map_err(|e| StorageError::Unavailable(format!("read task failed: {e}")))?
    }

    /// Submits a write that answers with a key.
    async fn write(&self, op: Op) -> Result<KeyValue, StorageError> {
        self.writer.submit(op).await?.ok_or_else(|| {
            StorageError::Internal("embedded store write answered without a value".to_owned())
        })
    }
}

/// Creates the tables of a new file and reads the counters of an existing one.
/// When a key written now with `ttl` expires, in milliseconds since the epoch.
fn expiry(ttl: std::time::Duration) -> u64 {
    writer::now_millis().saturating_add(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX))
}

fn initialize(db: &Database) -> Result<(u64, u64), StorageError> {
    let txn = db.begin_write().map_err(schema::db_err)?;
    let counters = {
        let mut tables = apply::Tables::open(&txn)?;
        tables.save_counters()?;
        (tables.revision, tables.compacted)
    };
    txn.commit().map_err(schema::db_err)?;
    Ok(counters)
}

#[async_trait]
impl Storage for EmbeddedStore {
    fn backend_name(&self) -> &'static str {
        "embedded"
    }

    async fn get(&self, key: &str) -> Result<Option<KeyValue>, StorageError> {
        let key = key.to_owned();
        self.read(move |db| read::get(db, &key)).await
    }

    async fn list(&self, prefix: &str, opts: ListOptions) -> Result<ListResult, StorageError> {
        let prefix = prefix.to_owned();
        self.read(move |db| read::list(db, &prefix, &opts)).await
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue, StorageError> {
        let key = key.to_owned();
        self.write(Op::Create {
            key,
            value,
            expires: None,
        })
        .await
    }

    async fn create_expiring(
        &self,
        key: &str,
        value: Bytes,
        ttl: std::time::Duration,
    ) -> Result<KeyValue, StorageError> {
        let key = key.to_owned();
        let expires = Some(expiry(ttl));
        self.write(Op::Create {
            key,
            value,
            expires,
        })
        .await
    }

    async fn update_expiring(
        &self,
        key: &str,
        value: Bytes,
        expected_revision: u64,
        ttl: std::time::Duration,
    ) -> Result<KeyValue, StorageError> {
        let key = key.to_owned();
        self.write(Op::Update {
            key,
            value,
            expected: expected_revision,
            expires: Some(expiry(ttl)),
        })
        .await
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_revision: u64,
    ) -> Result<KeyValue, StorageError> {
        let key = key.to_owned();
        let expected = expected_revision;
        self.write(Op::Update {
            key,
            value,
            expected,
            expires: None,
        })
        .await
    }

    async fn delete(
        &self,
        key: &str,
        expected_revision: Option<u64>,
    ) -> Result<KeyValue, StorageError> {
        let key = key.to_owned();
        let expected = expected_revision;
        self.write(Op::Delete { key, expected }).await
    }

    async fn watch(
        &self,
        prefix: &str,
        from_revision: u64,
        predicate: Option<Predicate>,
    ) -> Result<WatchStream, StorageError> {
        // Subscribe first: watch.rs explains why this order leaves no gap.
        let live = self.writer.subscribe();
        watch::watch(
            self.shared.clone(),
            live,
            prefix,
            from_revision,
            predicate,
            false,
        )
    }

    async fn list_and_feed(&self, prefix: &str) -> Result<(ListResult, Feed), StorageError> {
        let list = self.list(prefix, ListOptions::default()).await?;
        // Every batch the writer commits reaches every watcher, so a feed
        // learns the store's revision from each one: it needs no requests.
        let live = self.writer.subscribe();
        let events = watch::watch(self.shared.clone(), live, prefix, list.revision, None, true)?;
        let feed = Feed {
            events,
            progress: ProgressRequester::none(),
            consistent: true,
        };
        Ok((list, feed))
    }

    fn local_revision(&self) -> Option<u64> {
        Some(self.shared.revision.load(Ordering::Acquire))
    }

    async fn current_revision(&self) -> Result<u64, StorageError> {
        Ok(self.shared.revision.load(Ordering::Acquire))
    }

    async fn compacted_revision(&self) -> Result<u64, StorageError> {
        Ok(self.shared.compacted.load(Ordering::Acquire))
    }

    async fn compact(&self, revision: u64) -> Result<(), StorageError> {
        self.writer
            .submit(Op::Compact { revision })
            .await
            .map(|_| ())
    }

    async fn ready(&self) -> Result<(), StorageError> {
        if self.writer.is_running() {
            Ok(())
        } else {
            Err(StorageError::Unavailable(
                "embedded store writer stopped".to_owned(),
            ))
        }
    }
}
