//! Reads of single keys that arrive together share one etcd request: a
//! transaction of their ranges without writes, which etcd serves on its read
//! path as one linearizable read at one revision. Each read in it arrived
//! before the transaction was sent, so its answer is one it could have had on
//! its own; what the batch saves is etcd's per-request cost (a round of its
//! linearizable read protocol, a gRPC exchange), which is most of what a
//! point read costs it.
//!
//! A few transactions may be in flight at once ([`IN_FLIGHT`]): a read that
//! arrives while all of them are out waits for the next one and shares it
//! with everything that arrived meanwhile. A lone read goes out alone, as a
//! plain range, as soon as it arrives.

use std::sync::Arc;

use etcd_client::{GetOptions, KvClient, Txn, TxnOp, TxnOpResponse};
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::call::{Repeat, bounded, key_value};
use crate::{KeyValue, StorageError};

/// Transactions out at once.
const IN_FLIGHT: usize = 4;

/// Reads in one transaction: half of etcd's default `--max-txn-ops` (128),
/// which an operator may lower.
const MAX_BATCH: usize = 64;

/// What one read waits for.
type Answer = Result<Option<KeyValue>, StorageError>;

/// One read waiting for its batch.
struct Pending {
    /// The key as the caller names it.
    key: String,
    /// The key in etcd.
    etcd_key: Vec<u8>,
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
    pub(super) async fn get(&self, key: String, etcd_key: Vec<u8>) -> Answer {
        let (answer, answered) = oneshot::channel();
        let pending = Pending {
            key,
            etcd_key,
            answer,
        };
        if self.queue.send(pending).is_err() {
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
    let answers = match batch.as_slice() {
        [one] => vec![range(kv, timeout, &one.etcd_key).await],
        _ => transaction(kv, timeout, &batch).await,
    };
    for (read, answer) in batch.into_iter().zip(answers) {
        let answer = answer.map(|found| found.map(|kv| key_value(read.key, kv)));
        // A reader that gave up is no one's concern.
        let _ = read.answer.send(answer);
    }
}

/// One read alone: a plain range.
async fn range(
    kv: KvClient,
    timeout: std::time::Duration,
    key: &[u8],
) -> Result<Option<etcd_client::KeyValue>, StorageError> {
    let mut response = bounded(timeout, Repeat::Safe, || {
        let mut kv = kv.clone();
        let key = key.to_vec();
        async move { kv.get(key, Some(GetOptions::new())).await }
    })
    .await?;
    Ok(response.take_kvs().into_iter().next())
}

/// Several reads as the ranges of one transaction; every read gets the
/// batch's failure if it fails.
async fn transaction(
    kv: KvClient,
    timeout: std::time::Duration,
    batch: &[Pending],
) -> Vec<Result<Option<etcd_client::KeyValue>, StorageError>> {
    let ranges: Vec<TxnOp> = batch
        .iter()
        .map(|read| TxnOp::get(read.etcd_key.clone(), None))
        .collect();
    let txn = Txn::new().and_then(ranges);
    let answered = bounded(timeout, Repeat::Safe, || {
        let (mut kv, txn) = (kv.clone(), txn.clone());
        async move { kv.txn(txn).await }
    })
    .await;
    let response = match answered {
        Ok(response) => response,
        Err(failure) => {
            let error = StorageError::from(failure);
            return batch.iter().map(|_| Err(error.clone())).collect();
        }
    };
    let mut results = response.op_responses().into_iter();
    batch
        .iter()
        .map(|_| match results.next() {
            Some(TxnOpResponse::Get(mut got)) => Ok(got.take_kvs().into_iter().next()),
            _ => Err(StorageError::Internal(
                "etcd answered a read transaction without one of its ranges".to_owned(),
            )),
        })
        .collect()
}
