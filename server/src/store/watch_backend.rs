//! A watch served by the backend (the cache could not serve it exactly):
//! the initial objects as a list read them, then the backend's events,
//! decoded into the watcher's version.

use std::sync::Arc;

use futures::StreamExt;
use kapi_runtime::scheme::KindEntry;
use kapi_storage::{KeyValue, WatchEvent, WatchStream};
use tokio::sync::{mpsc, watch};

use super::Cached;
use super::watch::{BOOKMARK_EVERY, WatchOptions, WatchStart};
use crate::api_error::ApiError;
use crate::body::Object;
use crate::stored::codec;

/// Sends the initial objects, then the backend's `events`, until the
/// watcher leaves, the deadline passes or the server stops.
#[allow(clippy::too_many_arguments)]
pub(super) async fn pump(
    tx: mpsc::Sender<WatchStart>,
    entry: KindEntry,
    served: KindEntry,
    (initial, from): (Vec<Arc<Cached>>, u64),
    mut events: WatchStream,
    opts: WatchOptions,
    mut shutdown: watch::Receiver<bool>,
    started: Option<crate::watch_signal::WatchStarted>,
) {
    for object in initial {
        if tx.send(WatchStart::Event("ADDED", object)).await.is_err() {
            return;
        }
    }
    if opts.initial_events_end()
        && tx
            .send(WatchStart::Bookmark {
                revision: from,
                initial_events_end: true,
            })
            .await
            .is_err()
    {
        return;
    }
    if let Some(started) = started {
        started.fire();
    }
    let mut last = from;
    let deadline = tokio::time::sleep(opts.timeout);
    tokio::pin!(deadline);
    let mut bookmarks =
        tokio::time::interval_at(tokio::time::Instant::now() + BOOKMARK_EVERY, BOOKMARK_EVERY);
    loop {
        let frame = tokio::select! {
            event = events.next() => match event {
                Some(Ok(event)) => {
                    last = event.revision();
                    match frame_of(&entry, &served, event, opts.allow_bookmarks) {
                        Some(frame) => frame,
                        None => continue,
                    }
                }
                Some(Err(e)) => WatchStart::Error(ApiError::from_storage(e, crate::api_error::Target::NONE).0),
                None => return,
            },
            _ = bookmarks.tick(), if opts.allow_bookmarks => WatchStart::Bookmark { revision: last, initial_events_end: false },
            _ = &mut deadline => return,
            _ = shutdown.changed() => return,
            _ = tx.closed() => return,
        };
        let is_error = matches!(frame, WatchStart::Error(_));
        if tx.send(frame).await.is_err() || is_error {
            return;
        }
    }
}

/// Decodes a store event into a frame, in the watcher's version `served`
/// (`entry` is the storage version); a DELETED object carries the revision of its
/// deletion, as Kubernetes reports it. A backend's progress notification becomes
/// a BOOKMARK for watchers that allow them.
fn frame_of(
    entry: &KindEntry,
    served: &KindEntry,
    event: WatchEvent,
    bookmarks: bool,
) -> Option<WatchStart> {
    let (kind, kv) = match event {
        WatchEvent::Added(kv) => ("ADDED", kv),
        WatchEvent::Modified { kv, .. } => ("MODIFIED", kv),
        WatchEvent::Deleted { prev, revision } => (
            "DELETED",
            KeyValue {
                mod_revision: revision,
                ..prev
            },
        ),
        WatchEvent::Progress { revision } => {
            return bookmarks.then_some(WatchStart::Bookmark {
                revision,
                initial_events_end: false,
            });
        }
    };
    let served = codec::decode_stored(entry, &kv).and_then(|object| match served.hub() {
        None => Ok(object),
        Some(_) => served.to_served(object.into_typed()).map(Object::new),
    });
    match served {
        Ok(object) => Some(WatchStart::Event(kind, Cached::new(object))),
        Err(e) => {
            tracing::error!(key = %kv.key, error = %e, "skipping undecodable stored object in watch");
            None
        }
    }
}
