//! The task that keeps one resource's cache current: a list of the store,
//! then one watch from the list's revision (upstream's reflector inside the
//! cacher). Each event's object is decoded here, once, for every reader,
//! unless the server wrote it and handed it over (`handoff`).
//! When the watch fails (compaction, a lost connection) the task lists again
//! after a pause; the watchers of the old state are ended and resume.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::StreamExt;
use kapi_storage::{KeyValue, Storage, StorageError, WatchEvent};

use super::Inner;
use super::cached::{Cached, Event, EventType, json_frame_parts};
use super::index::Indexes;
use super::state::Objects;
use crate::body::Object;
use crate::stored::decode_stored;

/// How often the history drops the events that have aged out of it.
const EXPIRE_EVERY: Duration = Duration::from_secs(5);

/// Expired events that are worth handing their memory back to the system for.
const RELEASE_AFTER: usize = 1000;

/// The first pause before listing again; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(100);
const MAX_PAUSE: Duration = Duration::from_secs(5);

/// Keeps `inner` in step with `storage` until the task is aborted.
pub(super) async fn run(inner: Arc<Inner>, storage: Arc<dyn Storage>) {
    let mut pause = FIRST_PAUSE;
    loop {
        let error = follow(&inner, storage.as_ref(), &mut pause).await;
        if inner.revision.borrow().is_none() {
            inner.first_list_failed.store(true, Ordering::Release);
        }
        tracing::warn!(prefix = %inner.prefix, %error, "watch cache lists again");
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

/// Lists, then applies the watch's events until it fails.
async fn follow(inner: &Arc<Inner>, storage: &dyn Storage, pause: &mut Duration) -> StorageError {
    let (list, feed) = match storage.list_and_feed(&inner.prefix).await {
        Ok(listed) => listed,
        Err(e) => return e,
    };
    let revision = list.revision;
    // Decoding a large resource takes a while: off the async workers.
    let decoding = {
        let inner = inner.clone();
        tokio::task::spawn_blocking(move || decode_all(&inner, &list.items))
    };
    let (listed, undecodable) = match decoding.await {
        Ok(decoded) => decoded,
        Err(e) => return StorageError::Unavailable(format!("decoding the list failed: {e}")),
    };
    inner.set_progress(feed.progress, feed.consistent);
    inner.handoffs().listed(revision);
    inner.write().replace(listed, undecodable, revision);
    inner.publish(revision);
    *pause = FIRST_PAUSE;
    let mut events = feed.events;
    let mut expiry = tokio::time::interval(EXPIRE_EVERY);
    expiry.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            event = events.next() => match event {
                Some(Ok(event)) => {
                    wait_for_writer(inner, &event).await;
                    absorb(inner, event)
                }
                Some(Err(e)) => return e,
                None => break,
            },
            _ = expiry.tick() => expire(inner),
        }
    }
    StorageError::Unavailable("the store ended the watch cache's watch".to_owned())
}

/// Drops the events that have aged out of the history although no new
/// event came to push them out (after a burst of writes, a resource nobody
/// writes to any more), and hands their memory back when they were many.
fn expire(inner: &Inner) {
    let dropped: Vec<_> = inner.write().trim().collect();
    let many = dropped.len() >= RELEASE_AFTER;
    drop(dropped);
    if many {
        crate::memory::release();
    }
}

/// Decodes a list of the store, and indexes it.
fn decode_all(inner: &Inner, items: &[KeyValue]) -> ((Objects, Indexes), BTreeSet<Arc<str>>) {
    let mut objects = Objects::new();
    let mut indexes = Indexes::new(inner.entry.info.indexed_fields);
    let mut undecodable = BTreeSet::new();
    for kv in items {
        let key: Arc<str> = Arc::from(kv.key.as_str());
        match decode(inner, kv) {
            Some(object) => {
                // As an ADDED event would keep it, without the frame.
                let (head, tail) = json_frame_parts(EventType::Added.as_str());
                let (cached, _) = Cached::encoded(object, &inner.entry, &head, tail);
                indexes.update(&key, None, Some(&cached));
                objects.insert(key, cached);
            }
            None => {
                undecodable.insert(key);
            }
        }
    }
    ((objects, indexes), undecodable)
}

fn decode(inner: &Inner, kv: &KeyValue) -> Option<Object> {
    match decode_stored(&inner.entry, kv) {
        Ok(object) => Some(object),
        Err(error) => {
            tracing::error!(key = %kv.key, %error, "watch cache cannot decode a stored object");
            None
        }
    }
}

/// Whether `written`, handed over by its writer, is what `kv` decodes to.
/// The store holds what the writer encoded from it, so it is; debug builds
/// check it (a kind whose encoding loses something, or whose defaults are
/// not yet applied when it is written, would show here), and use the
/// decoded object when they differ.
#[cfg(debug_assertions)]
fn stores(inner: &Inner, kv: &KeyValue, written: &Cached) -> bool {
    let Some(decoded) = decode(inner, kv) else {
        return false;
    };
    let decoded = decoded.to_json();
    let written = written.object().and_then(|o| o.to_json());
    if decoded == written {
        return true;
    }
    tracing::error!(
        key = %kv.key,
        decoded = %String::from_utf8_lossy(&decoded.unwrap_or_default()),
        written = %String::from_utf8_lossy(&written.unwrap_or_default()),
        "the object a write handed the watch cache is not what its stored bytes decode to"
    );
    false
}

#[cfg(not(debug_assertions))]
fn stores(_: &Inner, _: &KeyValue, _: &Cached) -> bool {
    true
}

/// The longest an event waits for the server's write of its key to hand
/// its object over (the writer has its answer from the store by then; one
/// that never comes costs its event this long, then a decode).
const WRITER_WAIT: Duration = Duration::from_millis(100);

/// Waits until the write of `event`'s key under way, if any, has handed
/// its object over or ended.
async fn wait_for_writer(inner: &Inner, event: &WatchEvent) {
    let (key, revision) = match event {
        WatchEvent::Added(kv) | WatchEvent::Modified { kv, .. } => (&kv.key, kv.mod_revision),
        _ => return,
    };
    let wait = async {
        loop {
            let handed = inner.handed.notified();
            tokio::pin!(handed);
            handed.as_mut().enable();
            if inner.handoffs().ready(key, revision) {
                return;
            }
            handed.await;
        }
    };
    let _ = tokio::time::timeout(WRITER_WAIT, wait).await;
}

/// Applies one event of the store.
fn absorb(inner: &Inner, event: WatchEvent) {
    let (type_, kv, revision) = match event {
        WatchEvent::Progress { revision } => {
            let mut state = inner.write();
            state.revision = state.revision.max(revision);
            let revision = state.revision;
            drop(state);
            inner.publish(revision);
            return;
        }
        WatchEvent::Added(kv) => (EventType::Added, kv, None),
        WatchEvent::Modified { kv, .. } => (EventType::Modified, kv, None),
        WatchEvent::Deleted { prev, revision } => (EventType::Deleted, prev, Some(revision)),
    };
    let key: Arc<str> = Arc::from(kv.key.as_str());
    let revision = revision.unwrap_or(kv.mod_revision);
    let (head, tail) = json_frame_parts(type_.as_str());
    // The server's own write hands over the object it stored.
    let handed = inner.handoffs().take(&key, revision);
    let handed =
        handed.filter(|written| type_ != EventType::Deleted && stores(inner, &kv, written));
    if handed.is_some() {
        inner.handed_over.fetch_add(1, Ordering::Relaxed);
    }
    // The cache is the only writer of its state: what it holds for the key
    // is the previous value, already decoded.
    let current = inner.read().objects.get(&key).cloned();
    let object = match (type_, handed) {
        (_, Some(written)) => Some(Cached::encoded_from(&written, &inner.entry, &head, tail)),
        (EventType::Deleted, None) => current
            .as_ref()
            .and_then(|c| Some(c.object().ok()?.clone()))
            .or_else(|| decode(inner, &kv))
            .map(|mut last| {
                last.metadata_mut().resource_version = Some(revision.to_string());
                Cached::encoded(last, &inner.entry, &head, tail)
            }),
        (_, None) => decode(inner, &kv).map(|o| Cached::encoded(o, &inner.entry, &head, tail)),
    };
    let mut state = inner.write();
    match object {
        Some(object) => {
            let event = Event::with_frame(key, revision, type_, object, current);
            state.apply(event);
        }
        None => {
            // Readers delegate to the store while it holds what cannot be
            // decoded; watchers skip it, as the store's watch does.
            state.forget(&key);
            if type_ != EventType::Deleted {
                state.undecodable.insert(key);
            } else {
                state.undecodable.remove(&key);
            }
            state.revision = state.revision.max(revision);
        }
    }
    let revision = state.revision;
    drop(state);
    inner.publish(revision);
}
