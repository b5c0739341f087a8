//! WATCH: the initial state (for resourceVersion "" / "0" and for
//! `sendInitialEvents`), then the store's events from the revision on, with
//! bookmarks, a timeout, and an end on shutdown or client disconnect; from
//! the cache where it can serve the watch exactly, else from the backend.

use std::sync::Arc;
use std::time::Duration;

use kapi_runtime::meta::Status;
use kapi_storage::StorageError;
use tokio::sync::{mpsc, watch};

use super::list::{ListOptions, parse_rv};
use super::predicate::{matcher, predicate};
use super::watch_backend::pump;
use super::watch_cached::Watcher;
use super::{Cached, CachedStore};
use crate::api_error::{ApiError, ApiResult};
use crate::cache::{self, Subscription};
use crate::scope::Scope;
use crate::stored::keys;
use crate::watch_signal::WatchStarted;

/// How often a watch that allows bookmarks gets one.
pub(super) const BOOKMARK_EVERY: Duration = Duration::from_secs(60);

/// The query of a WATCH.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    /// Selectors and resourceVersion(Match).
    pub list: ListOptions,
    /// `sendInitialEvents`, `None` when not given.
    pub send_initial_events: Option<bool>,
    /// `allowWatchBookmarks=true`.
    pub allow_bookmarks: bool,
    /// `timeoutSeconds`, or the server's default.
    pub timeout: Duration,
}

impl WatchOptions {
    /// Whether the watch starts with the current objects as ADDED events:
    /// asked for, or, when `sendInitialEvents` is not given, a watch from no
    /// revision or "0" (as before watch lists).
    pub fn initial_events(&self) -> bool {
        let from_none = matches!(self.list.resource_version.as_deref(), None | Some("" | "0"));
        self.send_initial_events.unwrap_or(from_none)
    }

    /// Whether the initial events end with the `initial-events-end`
    /// bookmark: asked for, in a watch that allows bookmarks.
    pub fn initial_events_end(&self) -> bool {
        self.send_initial_events == Some(true) && self.allow_bookmarks
    }
}

/// One frame of a watch before encoding.
#[derive(Debug)]
pub enum WatchStart {
    /// `ADDED`, `MODIFIED` or `DELETED` with the object in the served version.
    Event(&'static str, Arc<Cached>),
    /// An event of the watch cache as it is (the served version is the
    /// stored one and the watcher sees it unchanged): its encoded frames are
    /// shared by every watcher.
    Shared(Arc<cache::Event>),
    /// A `BOOKMARK` at a revision; `initial_events_end` marks the end of the
    /// initial state for `sendInitialEvents` watchers.
    Bookmark {
        revision: u64,
        initial_events_end: bool,
    },
    /// An `ERROR` frame (e.g. 410 Expired), after which the stream ends.
    Error(Box<Status>),
}

impl CachedStore {
    /// Starts a watch; frames arrive on the returned channel until it
    /// closes. `started` is told once the initial events are on their way.
    /// The field selector must name fields the kind selects on.
    pub async fn watch(
        &self,
        scope: Scope<'_>,
        opts: WatchOptions,
        shutdown: watch::Receiver<bool>,
        started: Option<WatchStarted>,
    ) -> ApiResult<mpsc::Receiver<WatchStart>> {
        if self.cached(scope)
            && let Some(subscription) = self.subscribe(scope, &opts).await?
        {
            let (tx, rx) = mpsc::channel(64);
            let watcher = Watcher {
                tx,
                served: scope.served.clone(),
                as_stored: scope.is_served_as_stored(),
                prefix: keys::prefix(scope.info(), scope.namespace),
                matcher: matcher(scope, &opts.list.labels, &opts.list.fields),
                narrow: scope
                    .is_served_as_stored()
                    .then(|| (opts.list.labels.clone(), opts.list.fields.clone())),
                last: subscription.from,
                started,
            };
            tokio::spawn(watcher.run(subscription, opts, shutdown));
            return Ok(rx);
        }
        let rv = opts
            .list
            .resource_version
            .as_deref()
            .filter(|rv| !rv.is_empty() && *rv != "0");
        let (initial, from) = if opts.initial_events() {
            let list = ListOptions {
                limit: 0,
                continue_token: None,
                resource_version: None,
                ..opts.list.clone()
            };
            let page = self.list(scope, list).await?;
            (page.items, page.revision)
        } else if let Some(rv) = rv {
            (Vec::new(), parse_rv(rv)?)
        } else {
            // `sendInitialEvents=false` without a revision: from now on.
            (Vec::new(), self.current_revision().await?)
        };
        let prefix = keys::prefix(scope.info(), scope.namespace);
        let filter = predicate(scope, &opts.list.labels, &opts.list.fields);
        let (tx, rx) = mpsc::channel(64);
        match self.backend.watch(&prefix, from, filter).await {
            Ok(events) => {
                tokio::spawn(pump(
                    tx,
                    scope.entry.clone(),
                    scope.served.clone(),
                    (initial, from),
                    events,
                    opts,
                    shutdown,
                    started,
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

    /// A watch from the cache, or `None` when it cannot serve this one
    /// exactly (a revision before its window: the store replays it).
    async fn subscribe(
        &self,
        scope: Scope<'_>,
        opts: &WatchOptions,
    ) -> ApiResult<Option<Subscription>> {
        let rv = opts.list.resource_version.as_deref();
        let cache = self.caches.of(scope.entry);
        // The cache's triggers hold the stored version's values.
        let narrow = scope.is_served_as_stored().then_some(&*opts.list.fields);
        if !opts.initial_events() {
            let from = match rv {
                // `sendInitialEvents=false`: from where the cache stands
                // for "0", from the store's current revision without one.
                Some("0") => match *cache.revision().borrow() {
                    Some(revision) => revision,
                    None => return Ok(None),
                },
                None | Some("") => self.current_revision().await?,
                Some(rv) => parse_rv(rv)?,
            };
            return Ok(cache.subscribe(Some(from), narrow));
        }
        if !cache.listed().await {
            return Ok(None);
        }
        // The initial state: current for a watch without a revision, at
        // least the one given for `sendInitialEvents`, any for "0".
        let target = match rv {
            None | Some("") if !cache.serves_consistent_reads() => return Ok(None),
            None | Some("") => self.current_revision().await?,
            Some(rv) => parse_rv(rv)?,
        };
        if !cache.wait_fresh(target).await {
            return Ok(None);
        }
        Ok(cache.subscribe(None, narrow))
    }
}
