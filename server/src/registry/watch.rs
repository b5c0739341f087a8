//! WATCH: the initial state (for resourceVersion "" / "0" and for
//! `sendInitialEvents`), then the store's events from the revision on, with
//! bookmarks, a timeout, and an end on shutdown or client disconnect.

use std::time::Duration;

use futures::StreamExt;
use kapi_runtime::meta::Status;
use kapi_runtime::scheme::KindEntry;
use kapi_storage::{KeyValue, StorageError, WatchEvent, WatchStream};
use tokio::sync::{mpsc, watch};

use super::list::{check_fields, parse_rv, predicate};
use super::{ListOptions, Object, Registry, Scope, codec, keys};
use crate::api_error::{ApiError, ApiResult};

/// How often a watch that allows bookmarks gets one.
const BOOKMARK_EVERY: Duration = Duration::from_secs(60);

/// The query of a WATCH.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    /// Selectors and resourceVersion(Match).
    pub list: ListOptions,
    /// `sendInitialEvents=true`.
    pub send_initial_events: bool,
    /// `allowWatchBookmarks=true`.
    pub allow_bookmarks: bool,
    /// `timeoutSeconds`, or the server's default.
    pub timeout: Duration,
}

/// One frame of a watch before encoding.
#[derive(Debug)]
pub enum WatchStart {
    /// `ADDED`, `MODIFIED` or `DELETED` with the object.
    Event(&'static str, Object),
    /// A `BOOKMARK` at a revision; `initial_events_end` marks the end of the
    /// initial state for `sendInitialEvents` watchers.
    Bookmark {
        revision: u64,
        initial_events_end: bool,
    },
    /// An `ERROR` frame (e.g. 410 Expired), after which the stream ends.
    Error(Box<Status>),
}

impl Registry {
    /// Starts a watch; frames arrive on the returned channel until it closes.
    pub async fn watch(
        &self,
        scope: Scope<'_>,
        opts: WatchOptions,
        shutdown: watch::Receiver<bool>,
    ) -> ApiResult<mpsc::Receiver<WatchStart>> {
        check_fields(scope, &opts.list.fields)?;
        check_initial_events(&opts)?;
        let rv = opts
            .list
            .resource_version
            .as_deref()
            .filter(|rv| !rv.is_empty() && *rv != "0");
        let (initial, from) = if opts.send_initial_events || rv.is_none() {
            let list = ListOptions {
                limit: 0,
                continue_token: None,
                resource_version: None,
                ..opts.list.clone()
            };
            let page = self.list(scope, list).await?;
            (page.items, page.revision)
        } else {
            (Vec::new(), rv.map(parse_rv).transpose()?.unwrap_or(0))
        };
        let prefix = keys::prefix(scope.info(), scope.namespace);
        let filter = predicate(scope, &opts.list.labels, &opts.list.fields);
        let (tx, rx) = mpsc::channel(64);
        match self.storage.watch(&prefix, from, filter).await {
            Ok(events) => {
                tokio::spawn(pump(
                    tx,
                    scope.entry.clone(),
                    scope.served.clone(),
                    initial,
                    from,
                    events,
                    opts,
                    shutdown,
                ));
            }
            Err(e @ StorageError::Expired { .. }) => {
                let ApiError(status, _) = ApiError::from_storage(e, scope.target(""));
                // Kubernetes reports an expired watch as an ERROR frame of a 200 stream.
                let _ = tx.send(WatchStart::Error(status)).await;
            }
            Err(e) => return Err(ApiError::from_storage(e, scope.target(""))),
        }
        Ok(rx)
    }
}

fn check_initial_events(opts: &WatchOptions) -> ApiResult<()> {
    if !opts.send_initial_events {
        return Ok(());
    }
    if opts.list.resource_version_match.as_deref() != Some("NotOlderThan") {
        return Err(ApiError::bad_request(
            "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if !opts.allow_bookmarks {
        return Err(ApiError::bad_request(
            "allowWatchBookmarks: Forbidden: sendInitialEvents is only supported with allowWatchBookmarks set to true",
        ));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn pump(
    tx: mpsc::Sender<WatchStart>,
    entry: KindEntry,
    served: KindEntry,
    initial: Vec<Object>,
    from: u64,
    mut events: WatchStream,
    opts: WatchOptions,
    mut shutdown: watch::Receiver<bool>,
) {
    for object in initial {
        if tx.send(WatchStart::Event("ADDED", object)).await.is_err() {
            return;
        }
    }
    if opts.send_initial_events
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
        Ok(object) => Some(WatchStart::Event(kind, object)),
        Err(e) => {
            tracing::error!(key = %kv.key, error = %e, "skipping undecodable stored object in watch");
            None
        }
    }
}
