//! Reads of single keys that arrive together share one etcd request: a
//! transaction of their ranges without writes, which etcd serves on its read
//! path as one linearizable read at one revision. Each read in it arrived
//! before the transaction was sent, so its answer is one it could have had on
//! its own; what the batch saves is etcd's per-request cost (a round of its
//! linearizable read protocol, a gRPC exchange), which is most of what a
//! point read costs it.
//!
//! The store's current revision is read the same way: a request for it
//! joins the next batch, whose response header answers it. Consistent reads
//! served from a watch cache each need one, and many of them share a batch.
//!
//! One transaction is in flight at a time ([`IN_FLIGHT`]): a read that
//! arrives while it is out waits for the next one and shares it with
//! everything that arrived meanwhile. A lone read goes out alone, as a
//! plain range, as soon as it arrives.

use std::sync::Arc;

use etcd_client::{GetOptions, KvClient, Txn, TxnOp, TxnOpResponse};
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::COMPACT_REV_KEY;
use super::call::{Repeat, bounded, header_revision, key_value};
use crate::{KeyValue, StorageError};

/// Transactions out at once. Once gets were served from the watch cache,
/// most batches only read the revision; one at a time gathered more reads
/// per request than four did (three alternating pairs of kapi-bench's gets on
/// etcd: 22,000 against 19,000 gets/s on average, 68 against 82 µs of
/// server and etcd CPU per get).
const IN_FLIGHT: usize = 1;

/// Reads in one transaction: half of etcd's default `--max-txn-ops` (128),
/// which an operator may lower.
const MAX_BATCH: usize = 64;

/// What one read waits for: the revision its batch was read at, and the key
/// it asked for, if it asked for one.
type Answer = Result<(u64, Option<KeyValue>), StorageError>;

/// One read waiting for its batch.
struct Pending {
    /// The key as the caller names it, and in etcd; `None` for a read of
    /// the revision alone.
    key: Option<(String, Vec<u8>)>,
    answer: oneshot::Sender<Answer>,
}

/// The queue of point reads, served by a task that ends with the last
/// handle.
pub(super) struct Reads {
    queue: mpsc::UnboundedSender<Pending>,
}

impl Reads {
    /// Starts the task that batches reads to etcd through `kv`, each batch
    /// bounded by `timeout` as any call.
    pub(super) fn start(kv: KvClient, timeout: std::time::Duration) -> Reads {
        let (queue, pending) = mpsc::unbounded_channel();
        tokio::spawn(dispatch(pending, kv, timeout));
        Reads { queue }
    }

    /// Reads `key` (`etcd_key` in etcd) with whatever reads come with it.
    pub(super) async fn get(
        &self,
        key: String,
        etcd_key: Vec<u8>,
    ) -> Result<Option<KeyValue>, StorageError> {
        let (_, found) = self.read(Some((key, etcd_key))).await?;
        Ok(found)
    }

    /// The store's revision, read after this call began, with whatever reads
    /// come with it.
    pub(super) async fn revision(&self) -> Result<u64, StorageError> {
        let (revision, _) = self.read(None).await?;
        Ok(revision)
    }

    async fn read(&self, key: Option<(String, Vec<u8>)>) -> Answer {
        let (answer, answered) = oneshot::channel();
        if self.queue.send(Pending { key, answer }).is_err() {
            return Err(stopped());
        }
        answered.await.unwrap_or_else(|_| Err(stopped()))
    }
}

fn stopped() -> StorageError {
    StorageError::Unavailable("the etcd read batcher has stopped".to_owned())
}

/// Takes the reads waiting whenever a transaction may go out, and sends them.
async fn dispatch(
    mut pending: mpsc::UnboundedReceiver<Pending>,
    kv: KvClient,
    timeout: std::time::Duration,
) {
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    loop {
        // A slot first, then the reads: everything that arrived while every
        // slot was taken goes out together.
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let Some(first) = pending.recv().await else {
            return;
        };
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match pending.try_recv() {
                Ok(read) => batch.push(read),
                Err(_) => break,
            }
        }
        let kv = kv.clone();
        tokio::spawn(async move {
            send(kv, timeout, batch).await;
            drop(slot);
        });
    }
}

/// Sends one batch and answers each of its reads.
async fn send(kv: KvClient, timeout: std::time::Duration, batch: Vec<Pending>) {
    let keys: Vec<&[u8]> = batch
        .iter()
        .filter_map(|read| read.key.as_ref().map(|(_, etcd_key)| etcd_key.as_slice()))
        .collect();
    let answered = match keys.as_slice() {
        [] => range(kv, timeout, COMPACT_REV_KEY.as_bytes(), true).await,
        [one] => range(kv, timeout, one, false).await,
        _ => transaction(kv, timeout, &keys).await,
    };
    let (revision, mut found) = match answered {
        Ok((revision, found)) => (revision, found.into_iter()),
        Err(error) => {
            for read in batch {
                let _ = read.answer.send(Err(error.clone()));
            }
            return;
        }
    };
    for read in batch {
        let answer = match read.key {
            None => Ok((revision, None)),
            Some((key, _)) => match found.next() {
                Some(kv) => Ok((revision, kv.map(|kv| key_value(key, kv)))),
                None => Err(StorageError::Internal(
                    "etcd answered a read transaction without one of its ranges".to_owned(),
                )),
            },
        };
        // A reader that gave up is no one's concern.
        let _ = read.answer.send(answer);
    }
}

/// What a batch found: the revision it read at, and per key read the
/// key-value, if the key exists.
type Found = (u64, Vec<Option<etcd_client::KeyValue>>);

/// One key alone (or only the revision, counting `key`): a plain range.
async fn range(
    kv: KvClient,
    timeout: std::time::Duration,
    key: &[u8],
    count_only: bool,
) -> Result<Found, StorageError> {
    let options = match count_only {
        true => GetOptions::new().with_count_only(),
        false => GetOptions::new(),
    };
    let mut response = bounded(timeout, Repeat::Safe, || {
        let (mut kv, key, options) = (kv.clone(), key.to_vec(), options.clone());
        async move { kv.get(key, Some(options)).await }
    })
    .await?;
    let revision = header_revision(response.header())?;
    let found = match count_only {
        true => Vec::new(),
        false => vec![response.take_kvs().into_iter().next()],
    };
    Ok((revision, found))
}

/// Several keys as the ranges of one transaction.
async fn transaction(
    kv: KvClient,
    timeout: std::time::Duration,
    keys: &[&[u8]],
) -> Result<Found, StorageError> {
    let ranges: Vec<TxnOp> = keys
        .iter()
        .map(|key| TxnOp::get(key.to_vec(), None))
        .collect();
    let txn = Txn::new().and_then(ranges);
    let response = bounded(timeout, Repeat::Safe, || {
        let (mut kv, txn) = (kv.clone(), txn.clone());
        async move { kv.txn(txn).await }
    })
    .await?;
    let revision = header_revision(response.header())?;
    let found = response
        .op_responses()
        .into_iter()
        .map(|op| match op {
            TxnOpResponse::Get(mut got) => Ok(got.take_kvs().into_iter().next()),
            _ => Err(StorageError::Internal(
                "etcd answered a read transaction with a write".to_owned(),
            )),
        })
        .collect::<Result<_, _>>()?;
    Ok((revision, found))
}
