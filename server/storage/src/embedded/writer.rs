//! The group-commit writer: one thread owns every write transaction. It takes all
//! requests waiting on its queue, applies them in one transaction, pays one fsync
//! for the lot, and only then answers each caller and tells the watchers. Under
//! load many writes share an fsync; alone, a write costs one.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

use bytes::Bytes;
use redb::Durability;
use tokio::sync::{broadcast, mpsc, oneshot};

use super::Shared;
use super::apply::{self, Applied, OpError, Tables};
use super::compact;
use super::schema::db_err;
use super::watch::Batch;
use crate::{KeyValue, StorageError, WatchEvent};

/// Most requests in one transaction, so one batch cannot grow without bound.
const MAX_BATCH: usize = 1024;

/// How often expired keys are looked for.
const EXPIRY_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Now, in milliseconds since the Unix epoch.
pub(super) fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Requests that may wait for the writer before senders are slowed down.
const QUEUE: usize = 4096;

/// A write the writer thread performs.
pub(super) enum Op {
    Create {
        key: String,
        value: Bytes,
        /// When it expires (milliseconds since the epoch), if it does.
        expires: Option<u64>,
    },
    Update {
        key: String,
        value: Bytes,
        expected: u64,
        expires: Option<u64>,
    },
    /// Deletes the keys due by then (milliseconds since the epoch).
    Expire {
        now: u64,
    },
    Delete {
        key: String,
        expected: Option<u64>,
    },
    Compact {
        revision: u64,
    },
}

/// The answer to one request: the key as written (`None` for compaction).
type Reply = Result<Option<KeyValue>, StorageError>;

struct Request {
    op: Op,
    reply: oneshot::Sender<Reply>,
}

/// Handle to the writer thread; dropping it lets the thread finish its queue and
/// waits for it, so the database file is closed cleanly afterwards. It also owns
/// the live event channel, which closes with it so that watch streams end.
pub(super) struct Writer {
    queue: Option<mpsc::Sender<Request>>,
    thread: Option<JoinHandle<()>>,
    events: broadcast::Sender<Batch>,
}

impl Writer {
    /// Starts the writer thread for `shared`'s database; live events are kept
    /// for `watch_buffer` batches before a slow watcher is cut off.
    pub(super) fn start(shared: Arc<Shared>, watch_buffer: usize) -> Result<Self, StorageError> {
        let (queue, requests) = mpsc::channel(QUEUE);
        let (events, _) = broadcast::channel(watch_buffer.max(1));
        let publisher = events.clone();
        let thread = std::thread::Builder::new()
            .name("kapi-storage-writer".to_owned())
            .spawn(move || run(&shared, requests, &publisher))
            .map_err(|e| StorageError::Unavailable(format!("cannot start writer: {e}")))?;
        Ok(Writer {
            queue: Some(queue),
            thread: Some(thread),
            events,
        })
    }

    /// Starts the thread that asks, every second, for the keys due to be
    /// deleted (it ends with the writer: it holds the queue only weakly).
    pub(super) fn start_expiry(&self) -> Result<(), StorageError> {
        let Some(queue) = self.queue.as_ref().map(mpsc::Sender::downgrade) else {
            return Ok(());
        };
        std::thread::Builder::new()
            .name("kapi-storage-expiry".to_owned())
            .spawn(move || {
                loop {
                    std::thread::sleep(EXPIRY_EVERY);
                    let Some(queue) = queue.upgrade() else {
                        return;
                    };
                    let (reply, _) = oneshot::channel();
                    let op = Op::Expire { now: now_millis() };
                    if queue.blocking_send(Request { op, reply }).is_err() {
                        return;
                    }
                }
            })
            .map(|_| ())
            .map_err(|e| StorageError::Unavailable(format!("cannot start expiry: {e}")))
    }

    /// A receiver of every batch committed from now on.
    pub(super) fn subscribe(&self) -> broadcast::Receiver<Batch> {
        self.events.subscribe()
    }

    /// Whether the writer thread still takes requests.
    pub(super) fn is_running(&self) -> bool {
        self.queue.as_ref().is_some_and(|q| !q.is_closed())
    }

    /// Queues `op` and waits until it is durable (or rejected).
    pub(super) async fn submit(&self, op: Op) -> Reply {
        let stopped = || StorageError::Unavailable("embedded store writer stopped".to_owned());
        let queue = self.queue.as_ref().ok_or_else(stopped)?;
        let (reply, answer) = oneshot::channel();
        queue
            .send(Request { op, reply })
            .await
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the queue ends the thread's loop once the queue is empty.
        self.queue.take();
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!("embedded store writer thread panicked");
        }
    }
}

/// The writer thread: one batch per wake-up until every sender is gone.
fn run(shared: &Shared, mut requests: mpsc::Receiver<Request>, events: &broadcast::Sender<Batch>) {
    while let Some(first) = requests.blocking_recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match requests.try_recv() {
                Ok(request) => batch.push(request),
                Err(_) => break,
            }
        }
        commit_batch(shared, events, batch);
    }
}

/// Applies and commits one batch, then answers and publishes.
fn commit_batch(shared: &Shared, publisher: &broadcast::Sender<Batch>, batch: Vec<Request>) {
    let (ops, replies): (Vec<Op>, Vec<oneshot::Sender<Reply>>) =
        batch.into_iter().map(|r| (r.op, r.reply)).unzip();
    let outcomes = match apply_batch(shared, &ops) {
        Ok(outcomes) => outcomes,
        Err(err) => {
            tracing::error!(error = %err, requests = ops.len(), "embedded store batch failed");
            for reply in replies {
                // A caller that went away needs no answer.
                let _ = reply.send(Err(err.clone()));
            }
            return;
        }
    };
    let mut events: Vec<WatchEvent> = Vec::new();
    let mut answers = Vec::with_capacity(outcomes.len());
    for outcome in outcomes {
        answers.push(outcome.map(|applied| {
            events.extend(applied.events);
            applied.kv
        }));
    }
    if !events.is_empty() {
        // No receiver just means no watcher right now.
        let _ = publisher.send(Arc::from(events));
    }
    for (reply, answer) in replies.into_iter().zip(answers) {
        let _ = reply.send(answer);
    }
}

/// Applies `ops` in one write transaction; commits it with fsync when anything
/// changed. The outer error fails the whole batch, the inner ones single requests.
fn apply_batch(
    shared: &Shared,
    ops: &[Op],
) -> Result<Vec<Result<Applied, StorageError>>, StorageError> {
    let mut txn = shared.db.begin_write().map_err(db_err)?;
    txn.set_durability(Durability::Immediate).map_err(db_err)?;
    let mut outcomes = Vec::with_capacity(ops.len());
    let before = (
        shared.revision.load(Ordering::Acquire),
        shared.compacted.load(Ordering::Acquire),
    );
    let after = {
        let mut tables = Tables::open(&txn)?;
        for op in ops {
            match apply_one(&mut tables, op) {
                Ok(applied) => outcomes.push(Ok(applied)),
                Err(OpError::Rejected(err)) => outcomes.push(Err(err)),
                Err(OpError::Fatal(err)) => return Err(err),
            }
        }
        tables.save_counters()?;
        (tables.revision, tables.compacted)
    };
    if after == before {
        // Only rejections and no-ops: skip the fsync.
        txn.abort().map_err(db_err)?;
        return Ok(outcomes);
    }
    txn.commit().map_err(db_err)?;
    // Published before anyone is answered or told, so that a caller who saw its
    // write also sees the revision move (watch relies on it, see watch.rs).
    shared.revision.store(after.0, Ordering::Release);
    shared.compacted.store(after.1, Ordering::Release);
    Ok(outcomes)
}

fn apply_one(tables: &mut Tables<'_>, op: &Op) -> Result<Applied, OpError> {
    match op {
        Op::Create {
            key,
            value,
            expires,
        } => apply::create(tables, key, value.clone(), *expires),
        Op::Update {
            key,
            value,
            expected,
            expires,
        } => apply::update(tables, key, value.clone(), *expected, *expires),
        Op::Expire { now } => apply::expire(tables, *now),
        Op::Delete { key, expected } => apply::delete(tables, key, *expected),
        Op::Compact { revision } => compact::compact(tables, *revision),
    }
}
