//! Compaction: etcd's own, plus a record of it, and a compactor that replicas
//! sharing one etcd run together so that only one of them compacts per interval
//! (k8s.io/apiserver's `storage/etcd3/compact.go`).
//!
//! The record is the key [`COMPACT_REV_KEY`], as in Kubernetes: its value is the
//! last compacted revision (decimal), its version the compactors' logical clock.
//! It lives outside every prefix, like Kubernetes', because a compaction is
//! etcd-wide: clusters that share an etcd (and kube-apiservers, which use the
//! same key and protocol) also share compaction.

use std::time::Duration;

use etcd_client::{CompactionOptions, Compare, CompareOp, GetOptions, Txn, TxnOp, TxnOpResponse};

use super::EtcdStore;
use super::call::{Failure, Repeat, bounded, etcd_revision, header_revision};
use crate::{Storage, StorageError};

/// The key holding the last compacted revision (Kubernetes' name).
pub const COMPACT_REV_KEY: &str = "compact_rev_key";

/// Kubernetes' default compaction interval (`--etcd-compaction-interval`):
/// history of about 5 to 10 minutes stays readable, enough for watchers that
/// reconnect to resume instead of listing again.
pub const DEFAULT_COMPACTION_INTERVAL: Duration = Duration::from_secs(5 * 60);

/// How often [`compact`] retries recording its revision against concurrent
/// writers of the record before it reports failure.
const RECORD_ATTEMPTS: usize = 8;

/// The compaction record: the last compacted revision, and the key's mod
/// revision to update it with a compare-and-swap.
struct Record {
    compacted: u64,
    mod_revision: i64,
}

/// The last compacted revision per the record; 0 when none was recorded.
pub(super) async fn compacted_revision(store: &EtcdStore) -> Result<u64, StorageError> {
    Ok(read_record(store)
        .await?
        .map_or(0, |record| record.compacted))
}

async fn read_record(store: &EtcdStore) -> Result<Option<Record>, StorageError> {
    let mut response = store.range(COMPACT_REV_KEY, GetOptions::new()).await?;
    let found = response.take_kvs().into_iter().next();
    found.map(|kv| parse_record(&kv)).transpose()
}

fn parse_record(kv: &etcd_client::KeyValue) -> Result<Record, StorageError> {
    let text = String::from_utf8_lossy(kv.value());
    let compacted = text.trim().parse().map_err(|_| {
        StorageError::Internal(format!("{COMPACT_REV_KEY} holds {text:?}, not a revision"))
    })?;
    Ok(Record {
        compacted,
        mod_revision: kv.mod_revision(),
    })
}

/// Compacts etcd to `target`, then records it (raising the record only).
pub(super) async fn compact(store: &EtcdStore, target: u64) -> Result<(), StorageError> {
    let current = store.current_revision().await?;
    if target > current {
        return Err(StorageError::TooLargeRevision {
            requested: target,
            current,
        });
    }
    physical(store, target).await?;
    for _ in 0..RECORD_ATTEMPTS {
        let record = read_record(store).await?;
        if record.as_ref().is_some_and(|r| r.compacted >= target) {
            return Ok(());
        }
        // An absent key has mod revision 0, so this also creates the record.
        let seen = record.map_or(0, |r| r.mod_revision);
        let txn = Txn::new()
            .when([Compare::mod_revision(
                COMPACT_REV_KEY,
                CompareOp::Equal,
                seen,
            )])
            .and_then([TxnOp::put(COMPACT_REV_KEY, target.to_string(), None)]);
        if store.txn(txn).await?.succeeded() {
            return Ok(());
        }
    }
    Err(StorageError::Unavailable(format!(
        "compacted to {target} but could not record it: {COMPACT_REV_KEY} kept changing"
    )))
}

/// etcd's compaction, waiting until it is applied to the member's database.
/// A target etcd already compacted past changes nothing.
async fn physical(store: &EtcdStore, target: u64) -> Result<(), StorageError> {
    // Repeating a compaction is harmless: etcd answers that it is done.
    let call = bounded(store.timeout, Repeat::Safe, || {
        let mut kv = store.kv.clone();
        let options = CompactionOptions::new().with_physical();
        async move { kv.compact(etcd_revision(target), Some(options)).await }
    });
    match call.await {
        Ok(_) | Err(Failure::Compacted) => Ok(()),
        Err(failure) => Err(failure.into()),
    }
}

/// What one [`Compactor::round`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactionRound {
    /// Another replica took this interval (or compacted since this one last
    /// looked); this one adopted its clock and compacts nothing.
    Lost,
    /// This replica took the interval and compacted to this revision; `None` in
    /// its first round, when no revision is old enough yet.
    Won { compacted: Option<u64> },
}

/// One replica's side of the coordinated compaction (Kubernetes' protocol).
///
/// Each round, the replica compares [`COMPACT_REV_KEY`]'s version with the one
/// it saw last and, if equal, bumps it (by writing the revision it compacts to)
/// and compacts to the revision it saw one round earlier. A replica that
/// finds the version changed adopts it and waits for the next round. So among
/// replicas running rounds at the same interval one compacts per interval, and
/// if it dies another takes over within an interval or two. History of at
/// least one interval stays readable.
pub struct Compactor {
    store: EtcdStore,
    /// The version of the record this replica last saw (its logical clock).
    time: i64,
    /// The store's revision at this replica's previous round.
    revision: u64,
}

impl Compactor {
    /// A compactor that has seen nothing yet: its first round claims the
    /// interval only if no replica ever compacted.
    pub fn new(store: EtcdStore) -> Compactor {
        Compactor {
            store,
            time: 0,
            revision: 0,
        }
    }

    /// Runs one round of the protocol (call it once per interval).
    pub async fn round(&mut self) -> Result<CompactionRound, StorageError> {
        let claim = Txn::new()
            .when([Compare::version(
                COMPACT_REV_KEY,
                CompareOp::Equal,
                self.time,
            )])
            .and_then([TxnOp::put(COMPACT_REV_KEY, self.revision.to_string(), None)])
            .or_else([TxnOp::get(COMPACT_REV_KEY, None)]);
        let response = self.store.txn(claim).await?;
        let target = std::mem::replace(&mut self.revision, header_revision(response.header())?);
        if !response.succeeded() {
            self.time = match response.op_responses().into_iter().next() {
                Some(TxnOpResponse::Get(read)) => read.kvs().first().map_or(0, |kv| kv.version()),
                _ => 0,
            };
            return Ok(CompactionRound::Lost);
        }
        self.time += 1;
        if target == 0 {
            return Ok(CompactionRound::Won { compacted: None });
        }
        physical(&self.store, target).await?;
        Ok(CompactionRound::Won {
            compacted: Some(target),
        })
    }
}

/// Runs [`Compactor`] rounds every `interval` (Kubernetes' default is
/// [`DEFAULT_COMPACTION_INTERVAL`]) until the task is dropped or aborted; run it
/// on every replica. Failures are logged and retried the next interval.
pub async fn run_compactor(store: EtcdStore, interval: Duration) {
    // A zero interval would spin; nothing needs compaction that often.
    let interval = interval.max(Duration::from_millis(10));
    let mut compactor = Compactor::new(store);
    loop {
        tokio::time::sleep(interval).await;
        match compactor.round().await {
            Ok(CompactionRound::Won {
                compacted: Some(revision),
            }) => tracing::info!(revision, "etcd: compacted"),
            Ok(round) => tracing::debug!(?round, "etcd: no compaction by this replica"),
            Err(err) => {
                tracing::warn!(error = %err, "etcd: compaction failed; retrying next interval")
            }
        }
    }
}
