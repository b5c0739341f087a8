//! Watch: replay of the revision log, then the live events of the writer.
//!
//! A watcher subscribes to the live channel *before* it reads the current
//! revision. The writer stores the new revision after its commit and broadcasts
//! after that, so every event above the revision read here reaches the
//! subscription, and every event at or below it is in the log: replaying the log
//! up to that revision and then taking live events above the last one delivered
//! leaves no gap and no duplicate.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures::StreamExt;
use redb::{Database, ReadableDatabase, ReadableTable};
use tokio::sync::broadcast;

use super::Shared;
use super::schema::{COMPACTED, HISTORY, LOG, META, db_err, meta, version_at, version_before};
use crate::watch_filter::filter_event;
use crate::{Predicate, StorageError, WatchEvent, WatchStream};

/// Log entries read per blocking call while replaying, so a long replay neither
/// holds one read transaction for long nor buffers the whole history.
const REPLAY_CHUNK: usize = 512;

/// What the writer broadcasts: the events of one committed batch.
pub(super) type Batch = Arc<[WatchEvent]>;

/// Starts a watch of `prefix` for events after `from`; with `progress`, a
/// stretch of the log without events under the prefix is reported as
/// [`WatchEvent::Progress`] (a cache's feed: it always knows how far the
/// store has gone).
pub(super) fn watch(
    shared: Arc<Shared>,
    live: broadcast::Receiver<Batch>,
    prefix: &str,
    from: u64,
    predicate: Option<Predicate>,
    progress: bool,
) -> Result<WatchStream, StorageError> {
    let current = shared.revision.load(Ordering::Acquire);
    let compacted = shared.compacted.load(Ordering::Acquire);
    // From the compacted revision itself is fine: its successors are all kept.
    if from < compacted {
        return Err(StorageError::Expired {
            requested: from,
            compacted,
        });
    }
    let watcher = Watcher {
        shared,
        live,
        prefix: Arc::from(prefix),
        predicate,
        progress,
        last: from,
        replay_to: current,
        pending: VecDeque::new(),
        done: false,
    };
    let stream = futures::stream::unfold(watcher, |mut w| async move {
        let item = w.next().await?;
        Some((item, w))
    });
    Ok(stream.boxed())
}

/// The state of one watch stream; owns what it needs so the stream is 'static.
struct Watcher {
    shared: Arc<Shared>,
    live: broadcast::Receiver<Batch>,
    prefix: Arc<str>,
    predicate: Option<Predicate>,
    /// Report stretches without events as progress.
    progress: bool,
    /// The revision of the last event examined (delivered or filtered out).
    last: u64,
    /// Replay the log up to here before taking live events.
    replay_to: u64,
    pending: VecDeque<WatchEvent>,
    /// Set after an error item or when the store closed.
    done: bool,
}

impl Watcher {
    async fn next(&mut self) -> Option<Result<WatchEvent, StorageError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            if self.done {
                return None;
            }
            let step = if self.last < self.replay_to {
                self.replay().await
            } else {
                self.receive().await
            };
            if let Err(err) = step {
                self.done = true;
                return Some(Err(err));
            }
        }
    }

    /// Queues the next chunk of the revision log.
    async fn replay(&mut self) -> Result<(), StorageError> {
        let (shared, prefix) = (self.shared.clone(), self.prefix.clone());
        let (after, to) = (self.last, self.replay_to);
        let (events, last) =
            tokio::task::spawn_blocking(move || replay_chunk(&shared.db, &prefix, after, to))
                .await
                .map_err(|e| StorageError::Unavailable(format!("watch replay failed: {e}")))??;
        self.last = last;
        self.queue(events.into_iter());
        Ok(())
    }

    /// Queues the next live batch, skipping what the replay already covered.
    async fn receive(&mut self) -> Result<(), StorageError> {
        match self.live.recv().await {
            Ok(batch) => {
                let last = self.last;
                let fresh = batch.iter().filter(|e| e.revision() > last).cloned();
                self.queue(fresh.collect::<Vec<_>>().into_iter());
                Ok(())
            }
            // The watcher fell behind the channel: events were lost, so it must
            // start over from a list, as with etcd's compacted watch (410 Gone).
            Err(broadcast::error::RecvError::Lagged(_)) => Err(StorageError::Expired {
                requested: self.last,
                compacted: self.shared.compacted.load(Ordering::Acquire),
            }),
            Err(broadcast::error::RecvError::Closed) => {
                self.done = true;
                Ok(())
            }
        }
    }

    fn queue(&mut self, events: impl Iterator<Item = WatchEvent>) {
        let (before, queued) = (self.last, self.pending.len());
        for event in events {
            self.last = self.last.max(event.revision());
            if let Some(event) = filter_event(event, &self.prefix, self.predicate.as_ref()) {
                self.pending.push_back(event);
            }
        }
        if self.progress && self.pending.len() == queued && self.last > before {
            self.pending.push_back(WatchEvent::Progress {
                revision: self.last,
            });
        }
    }
}

/// Reads the log after `after` up to `to` (at most [`REPLAY_CHUNK`] entries) as
/// events under `prefix`; also returns the revision the chunk reached.
fn replay_chunk(
    db: &Database,
    prefix: &str,
    after: u64,
    to: u64,
) -> Result<(Vec<WatchEvent>, u64), StorageError> {
    let txn = db.begin_read().map_err(db_err)?;
    let compacted = meta(&txn.open_table(META).map_err(db_err)?, COMPACTED)?;
    if after < compacted {
        return Err(StorageError::Expired {
            requested: after,
            compacted,
        });
    }
    let log = txn.open_table(LOG).map_err(db_err)?;
    let history = txn.open_table(HISTORY).map_err(db_err)?;
    let mut events = Vec::new();
    let mut reached = to;
    for (scanned, row) in log.range((after + 1)..=to).map_err(db_err)?.enumerate() {
        let (revision, key) = row.map_err(db_err)?;
        let (revision, key) = (revision.value(), key.value());
        if scanned == REPLAY_CHUNK {
            reached = revision - 1;
            break;
        }
        if key.starts_with(prefix) {
            events.push(event_at(&history, key, revision)?);
        }
    }
    Ok((events, reached))
}

/// Rebuilds the event written at `revision` from the history.
fn event_at(
    history: &impl ReadableTable<super::schema::HistoryKey, super::schema::HistoryValue>,
    key: &str,
    revision: u64,
) -> Result<WatchEvent, StorageError> {
    let missing = || StorageError::Internal(format!("{key}: revision {revision} not in history"));
    let version = version_at(history, key, revision)?.ok_or_else(missing)?;
    let prev = version_before(history, key, revision)?
        .filter(|(_, v)| !v.tombstone)
        .map(|(rev, v)| v.into_kv(key, rev));
    match (version.tombstone, prev) {
        (true, Some(prev)) => Ok(WatchEvent::Deleted { prev, revision }),
        (true, None) => Err(missing()),
        (false, Some(prev)) => Ok(WatchEvent::Modified {
            kv: version.into_kv(key, revision),
            prev,
        }),
        (false, None) => Ok(WatchEvent::Added(version.into_kv(key, revision))),
    }
}
