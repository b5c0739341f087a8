//! Which store the server runs on: the embedded default in the data directory,
//! or an etcd cluster; each with its own compaction.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use kapi_storage::Storage;
use kapi_storage::embedded::EmbeddedStore;
use kapi_storage::etcd::{EtcdOptions, EtcdStore, run_compactor};

use super::ServeError;

/// How long history is kept for watches and consistent pages (Kubernetes compacts
/// every 5 minutes).
pub const COMPACTION_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// The storage backend to serve from.
#[derive(Clone, Debug)]
pub enum Backend {
    /// The embedded, persistent store in this directory (the default).
    Embedded(PathBuf),
    /// An etcd cluster (`--etcd-servers`).
    Etcd(EtcdOptions),
}

/// An opened backend and the compaction task to run beside it.
pub struct Opened {
    /// The store.
    pub storage: Arc<dyn Storage>,
    /// Runs forever, compacting history older than [`COMPACTION_INTERVAL`].
    pub compactor: BoxFuture<'static, ()>,
}

impl Backend {
    /// Opens (or connects to) the store.
    pub async fn open(&self) -> Result<Opened, ServeError> {
        match self {
            Backend::Embedded(dir) => {
                let store = Arc::new(EmbeddedStore::open(dir)?);
                let storage: Arc<dyn Storage> = store;
                Ok(Opened {
                    storage: storage.clone(),
                    compactor: Box::pin(compact_locally(storage)),
                })
            }
            Backend::Etcd(opts) => {
                let store = EtcdStore::connect(opts.clone()).await?;
                // Replicas sharing the cluster agree through etcd on who compacts.
                let compactor = Box::pin(run_compactor(store.clone(), COMPACTION_INTERVAL));
                Ok(Opened {
                    storage: Arc::new(store),
                    compactor,
                })
            }
        }
    }
}

/// Keeps one interval of history: each tick compacts to the revision seen at the
/// previous tick.
async fn compact_locally(storage: Arc<dyn Storage>) {
    let mut ticker = tokio::time::interval(COMPACTION_INTERVAL);
    let mut previous = None;
    loop {
        ticker.tick().await;
        if let Some(revision) = previous
            && let Err(e) = storage.compact(revision).await
        {
            tracing::warn!(error = %e, revision, "compaction failed");
        }
        previous = storage.current_revision().await.ok();
    }
}
