//! WATCH: the initial state (for resourceVersion "" / "0" and for
//! `sendInitialEvents`), then the store's events from the revision on, with
//! bookmarks, a timeout, and an end on shutdown or client disconnect.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kapi_runtime::meta::Status;
use kapi_runtime::scheme::KindEntry;
use kapi_storage::{KeyValue, StorageError, WatchEvent, WatchStream};
use tokio::sync::{broadcast, mpsc, watch};

use super::list::{Matcher, check_fields, matcher, parse_rv, predicate};
use super::{ListOptions, Object, Registry, Scope, codec, keys};
use crate::api_error::{ApiError, ApiResult};
use crate::cache::{self, Cached, Start, Subscription};
use crate::selectors::field::FieldSelector;
use crate::selectors::label::LabelSelector;

/// How often a watch that allows bookmarks gets one.
const BOOKMARK_EVERY: Duration = Duration::from_secs(60);

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

impl Registry {
    /// Starts a watch; frames arrive on the returned channel until it closes.
    pub async fn watch(
        &self,
        scope: Scope<'_>,
        opts: WatchOptions,
        shutdown: watch::Receiver<bool>,
    ) -> ApiResult<mpsc::Receiver<WatchStart>> {
        check_fields(scope, &opts.list.fields)?;
        // Priority and fairness keeps the watch's seats until its initial
        // events are on their way.
        let started = crate::watch_signal::watch_started();
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
        match self.storage.watch(&prefix, from, filter).await {
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
}

impl Registry {
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

/// One watch served from the cache.
struct Watcher {
    tx: mpsc::Sender<WatchStart>,
    served: KindEntry,
    /// The served version is the stored one: events go out as they are.
    as_stored: bool,
    /// The keys watched (a namespace's or all).
    prefix: String,
    matcher: Option<Matcher>,
    /// The selectors, where the cache's indexes may narrow the initial
    /// objects by them (they index the stored version).
    narrow: Option<(Arc<LabelSelector>, Arc<FieldSelector>)>,
    /// The revision of the last event sent or skipped.
    last: u64,
    /// Told once the initial events are sent.
    started: Option<crate::watch_signal::WatchStarted>,
}

/// Why a cached watch ends.
enum End {
    /// The client left, the deadline passed or the server stops.
    Done,
    /// The watcher fell more than the cache's buffer behind (or the cache
    /// relisted): the stream is closed and the client resumes or relists,
    /// as upstream closes a watcher that blocks its cacher.
    Behind,
}

impl Watcher {
    async fn run(
        mut self,
        sub: Subscription,
        opts: WatchOptions,
        mut shutdown: watch::Receiver<bool>,
    ) {
        let Subscription {
            start,
            mut live,
            from,
            reached,
        } = sub;
        if self.start(start).await.is_err() {
            return;
        }
        if opts.initial_events_end()
            && self
                .send(WatchStart::Bookmark {
                    revision: from,
                    initial_events_end: true,
                })
                .await
                .is_err()
        {
            return;
        }
        if let Some(started) = self.started.take() {
            started.fire();
        }
        let deadline = tokio::time::sleep(opts.timeout);
        tokio::pin!(deadline);
        let mut bookmarks =
            tokio::time::interval_at(tokio::time::Instant::now() + BOOKMARK_EVERY, BOOKMARK_EVERY);
        loop {
            let step = tokio::select! {
                event = live.recv() => match event {
                    Ok(event) => self.event(&event).await,
                    Err(broadcast::error::RecvError::Lagged(_)) => Err(End::Behind),
                    Err(broadcast::error::RecvError::Closed) => Err(End::Behind),
                },
                _ = bookmarks.tick(), if opts.allow_bookmarks => self.bookmark(&mut live, &reached).await,
                _ = &mut deadline => Err(End::Done),
                _ = shutdown.changed() => Err(End::Done),
                _ = self.tx.closed() => Err(End::Done),
            };
            if let Err(end) = step {
                if let End::Behind = end {
                    tracing::debug!(prefix = %self.prefix, "closing a watcher that fell behind");
                }
                return;
            }
        }
    }

    /// The initial ADDED events, or the window's events after the revision.
    async fn start(&mut self, start: Start) -> Result<(), End> {
        match start {
            Start::Snapshot(snapshot) => {
                let page = snapshot.page(
                    &self.prefix,
                    None,
                    0,
                    self.matcher.as_deref(),
                    self.narrow.as_ref().map(|(l, f)| (&**l, &**f)),
                );
                for cached in page.items {
                    if let Some(cached) = self.served(cached) {
                        self.send(WatchStart::Event("ADDED", cached)).await?;
                    }
                }
            }
            Start::History(events) => {
                for event in events {
                    self.event(&event).await?;
                }
            }
        }
        Ok(())
    }

    /// Sends one event as this watcher sees it.
    async fn event(&mut self, event: &Arc<cache::Event>) -> Result<(), End> {
        if event.revision <= self.last {
            return Ok(());
        }
        self.last = event.revision;
        let Some((type_, object)) = cache::visible(event, &self.prefix, self.matcher.as_deref())
        else {
            return Ok(());
        };
        let own = type_ == event.type_ && Arc::ptr_eq(&object, &event.object);
        if own && self.as_stored {
            return self.send(WatchStart::Shared(event.clone())).await;
        }
        match self.served(object) {
            Some(object) => self.send(WatchStart::Event(type_.as_str(), object)).await,
            None => Ok(()),
        }
    }

    /// A BOOKMARK at the cache's revision, after every event up to it.
    async fn bookmark(
        &mut self,
        live: &mut broadcast::Receiver<Arc<cache::Event>>,
        reached: &watch::Receiver<Option<u64>>,
    ) -> Result<(), End> {
        // The feed sends an event before it publishes its revision: once the
        // revision is read, every event up to it is on the channel.
        let revision = reached.borrow().unwrap_or(0);
        loop {
            match live.try_recv() {
                Ok(event) => self.event(&event).await?,
                Err(broadcast::error::TryRecvError::Empty) => break,
                Err(_) => return Err(End::Behind),
            }
        }
        self.last = self.last.max(revision);
        self.send(WatchStart::Bookmark {
            revision: self.last,
            initial_events_end: false,
        })
        .await
    }

    /// An object of the storage version in the watcher's version (converted
    /// once for every watcher, list and get of that version); `None`
    /// (skipped, as the store's watch skips what it cannot decode) when it
    /// does not convert.
    fn served(&self, cached: Arc<Cached>) -> Option<Arc<Cached>> {
        if self.as_stored {
            return Some(cached);
        }
        let convert = |object: &Object| {
            let typed = self.served.to_served(object.clone().into_typed())?;
            Ok(Object::new(typed))
        };
        match cached.served(&self.served, convert) {
            Ok(object) => Some(object),
            Err(error) => {
                tracing::error!(%error, "skipping an object that does not convert in a watch");
                None
            }
        }
    }

    async fn send(&self, frame: WatchStart) -> Result<(), End> {
        self.tx.send(frame).await.map_err(|_| End::Done)
    }
}

#[allow(clippy::too_many_arguments)]
async fn pump(
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
