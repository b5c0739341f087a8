//! Watch: an etcd watch on the mapped prefix from `from_revision + 1`, with
//! previous values, turned into the contract's events.
//!
//! The stream never skips silently: when etcd cancels the watch (compaction,
//! lost leader) or the connection breaks, it ends with an error item
//! ([`StorageError::Expired`] or [`StorageError::Unavailable`]), so that its
//! reader lists again, as Kubernetes' reflectors do after a failed watch.

use std::collections::VecDeque;

use etcd_client::{Event, EventType, WatchOptions, WatchResponse, WatchStream};
use futures::StreamExt;

use super::EtcdStore;
use super::call::{Repeat, bounded, etcd_revision, header_revision, key_text, key_value, revision};
use super::keys::{Scope, prefix_range_end};
use crate::watch_filter::filter_event;
use crate::{KeyValue, Predicate, StorageError, WatchEvent};

/// Watches `prefix` after `from`.
pub(super) async fn watch(
    store: &EtcdStore,
    prefix: &str,
    from: u64,
    predicate: Option<Predicate>,
) -> Result<crate::WatchStream, StorageError> {
    // etcd keeps the revision a compaction was made at, so it would accept a
    // watch from one below it (its first event is at the compacted revision).
    // The contract is stricter, like the embedded store: anything below the
    // compacted revision is Expired. The compaction record says where that is.
    let compacted = super::compaction::compacted_revision(store).await?;
    if from < compacted {
        return Err(StorageError::Expired {
            requested: from,
            compacted,
        });
    }
    let scope = store.keys.scope(prefix);
    let options = WatchOptions::new()
        .with_range(prefix_range_end(scope.etcd.as_bytes()))
        .with_start_revision(etcd_revision(from.saturating_add(1)))
        .with_prev_key()
        // Periodic "nothing changed up to revision N": WatchEvent::Progress.
        .with_progress_notify();
    // Open the watch and wait for etcd to confirm it, so that errors (no
    // leader, a compacted start) surface here and not as a first item.
    let (stream, first) = bounded(store.timeout, Repeat::Safe, || {
        let (mut client, key, options) = (store.watch.clone(), scope.etcd.clone(), options.clone());
        async move {
            let mut stream = client.watch(key, Some(options)).await?;
            let first = stream.message().await?;
            Ok((stream, first))
        }
    })
    .await?;
    let mut watcher = Watcher {
        stream: None,
        scope,
        predicate,
        last: from,
        pending: VecDeque::new(),
        done: false,
    };
    match first {
        Some(response) if response.created() && !response.canceled() => {}
        Some(response) => watcher.absorb(response)?,
        None => return Err(ended()),
    }
    watcher.stream = Some(stream);
    let events = futures::stream::unfold(watcher, |mut w| async move {
        let item = w.next().await?;
        Some((item, w))
    });
    Ok(events.boxed())
}

pub(super) fn ended() -> StorageError {
    StorageError::Unavailable("etcd ended the watch stream".to_owned())
}

/// The state of one watch stream; owns what it needs so the stream is 'static.
struct Watcher {
    /// Set once etcd confirmed the watch; dropped after an error item, which
    /// ends the etcd watch at once rather than when the reader lets go.
    stream: Option<WatchStream>,
    scope: Scope,
    predicate: Option<Predicate>,
    /// The revision of the last event or progress examined.
    last: u64,
    pending: VecDeque<WatchEvent>,
    /// Set after an error item.
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
            let stream = self.stream.as_mut()?;
            let step = match stream.message().await {
                Ok(Some(response)) => self.absorb(response),
                Ok(None) => Err(ended()),
                Err(err) => Err(broke(&err)),
            };
            if let Err(err) = step {
                self.done = true;
                self.stream = None;
                return Some(Err(err));
            }
        }
    }

    /// Queues the events of one response, or fails for a cancelled watch.
    fn absorb(&mut self, response: WatchResponse) -> Result<(), StorageError> {
        check(&response, self.last)?;
        if response.events().is_empty() {
            if !response.created() {
                self.progress(header_revision(response.header())?);
            }
            return Ok(());
        }
        for event in response.events() {
            let event = translate(&self.scope, event, self.last)?;
            self.last = self.last.max(event.revision());
            if let Some(event) = filter_event(event, &self.scope.caller, self.predicate.as_ref()) {
                self.pending.push_back(event);
            }
        }
        Ok(())
    }

    /// A progress notification: etcd promises every later event on this watch
    /// has a higher revision.
    fn progress(&mut self, revision: u64) {
        if revision >= self.last {
            self.last = revision;
            self.pending.push_back(WatchEvent::Progress { revision });
        }
    }
}

/// Fails for a response that ends the watch: compacted past its position
/// (`last`), or cancelled.
pub(super) fn check(response: &WatchResponse, last: u64) -> Result<(), StorageError> {
    if response.compact_revision() > 0 {
        return Err(StorageError::Expired {
            requested: last,
            compacted: revision(response.compact_revision()),
        });
    }
    if response.canceled() {
        return Err(StorageError::Unavailable(format!(
            "etcd cancelled the watch: {}",
            response.cancel_reason()
        )));
    }
    Ok(())
}

/// The error of a watch stream that broke.
pub(super) fn broke(err: &etcd_client::Error) -> StorageError {
    StorageError::Unavailable(format!("etcd watch stream broke: {err}"))
}

/// One etcd event under `scope` as the contract's: ADDED when the write
/// created the key, else MODIFIED; DELETED at the revision of the delete,
/// with the last value. `last` is the watch's position, for the error of an
/// event whose previous value was compacted away.
pub(super) fn translate(
    scope: &Scope,
    event: &Event,
    last: u64,
) -> Result<WatchEvent, StorageError> {
    let kv = event
        .kv()
        .ok_or_else(|| StorageError::Internal("etcd watch event without a key".to_owned()))?;
    let at = revision(kv.mod_revision());
    let prev = event.prev_kv().map(|prev| named(scope, prev)).transpose()?;
    match (event.event_type(), prev) {
        (EventType::Put, _) if kv.create_revision() == kv.mod_revision() => {
            Ok(WatchEvent::Added(named(scope, kv)?))
        }
        (EventType::Put, Some(prev)) => Ok(WatchEvent::Modified {
            kv: named(scope, kv)?,
            prev,
        }),
        (EventType::Delete, Some(prev)) => Ok(WatchEvent::Deleted { prev, revision: at }),
        // etcd leaves out the previous value when it was compacted away:
        // the event cannot be told in full, so the watcher must relist.
        (_, None) => Err(StorageError::Expired {
            requested: last,
            compacted: at,
        }),
    }
}

/// An etcd key-value under `scope`, named as the caller names it.
fn named(scope: &Scope, kv: &etcd_client::KeyValue) -> Result<KeyValue, StorageError> {
    let etcd_key = key_text(kv.key())?;
    let key = scope.to_caller(etcd_key).ok_or_else(|| {
        StorageError::Internal(format!(
            "etcd watch event for {etcd_key} outside the prefix"
        ))
    })?;
    Ok(key_value(key, kv.clone()))
}
