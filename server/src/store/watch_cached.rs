//! A watch served from the cache: the initial objects from its snapshot (or
//! the events of its window after the revision), then its live events, each
//! shared with every watcher that sees it unchanged.

use std::sync::Arc;

use kapi_runtime::scheme::KindEntry;
use tokio::sync::{broadcast, mpsc, watch};

use super::predicate::Matcher;
use super::watch::{BOOKMARK_EVERY, WatchOptions, WatchStart};
use crate::body::Object;
use crate::cache::{self, Cached, Start, Subscription};
use crate::selectors::field::FieldSelector;
use crate::selectors::label::LabelSelector;

/// One watch served from the cache.
pub(super) struct Watcher {
    pub(super) tx: mpsc::Sender<WatchStart>,
    pub(super) served: KindEntry,
    /// The served version is the stored one: events go out as they are.
    pub(super) as_stored: bool,
    /// The keys watched (a namespace's or all).
    pub(super) prefix: String,
    pub(super) matcher: Option<Matcher>,
    /// The selectors, where the cache's indexes may narrow the initial
    /// objects by them (they index the stored version).
    pub(super) narrow: Option<(Arc<LabelSelector>, Arc<FieldSelector>)>,
    /// The revision of the last event sent or skipped.
    pub(super) last: u64,
    /// Told once the initial events are sent.
    pub(super) started: Option<crate::watch_signal::WatchStarted>,
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
    pub(super) async fn run(
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
