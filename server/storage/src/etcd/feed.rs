//! The watch caches' feed: one etcd watch of the whole key space, whose
//! events are handed to every cache under whose prefix they fall.
//!
//! One watch of everything knows exactly how far the store has got, which a
//! watch of one prefix cannot: etcd counts a revision only for a write that
//! changed some key, and a watch of every key sees each such change, in
//! revision order and with all the changes of one revision in one response.
//! So once the feed has handed over the events of a response, every cache
//! holds every change up to that revision, and a cache waiting to reach the
//! store's revision for a consistent read is told so at once, by a
//! [`WatchEvent::Progress`], whatever prefix the last write was under. etcd's
//! own progress notifications could say the same only from 3.4.31 and
//! 3.5.13 on (before, a notification may run ahead of the events), and would
//! cost a request per cache.
//!
//! A cache subscribes before it lists, and lists at the revision the feed had
//! reached when it subscribed (`list_and_feed`), so no event falls between
//! the list and the watch.
//!
//! Each cache has a bounded queue ([`QUEUE`]), deep enough for a cache that
//! is still decoding its first list of a large resource while writes go on.
//! A cache whose queue is full anyway is dropped from the feed, so it lists
//! again, rather than holding up every other cache. The feed ends, and every
//! cache lists again, when etcd ends the watch; the next subscriber starts a
//! new one. When no cache is left, the feed stops.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use etcd_client::{WatchOptions, WatchResponse, WatchStream};
use futures::StreamExt;
use tokio::sync::{Notify, mpsc};

use super::EtcdStore;
use super::call::{Repeat, bounded, etcd_revision};
use super::keys::Scope;
use super::watch::{broke, check, ended, translate};
use crate::{Feed, ProgressRequester, ProgressWanted, Storage, StorageError, WatchEvent};

/// Events queued for one cache before the feed drops it.
const QUEUE: usize = 8192;

/// How often every cache that the feed's events have not reached lately is
/// told how far the store has got, so its watchers' bookmarks move on.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

type Item = Result<WatchEvent, StorageError>;

/// The store's feed, started by the first cache that subscribes.
#[derive(Default)]
pub(super) struct Feeds {
    current: tokio::sync::Mutex<Option<Arc<Shared>>>,
}

impl Feeds {
    /// Subscribes to the events under `prefix` after the revision returned,
    /// which the caller lists at.
    pub(super) async fn subscribe(
        &self,
        store: &EtcdStore,
        prefix: &str,
    ) -> Result<(u64, Feed), StorageError> {
        let mut current = self.current.lock().await;
        let shared = match current.as_ref() {
            Some(shared) if !shared.ended.load(Ordering::Acquire) => shared.clone(),
            _ => {
                let started = start(store).await?;
                *current = Some(started.clone());
                started
            }
        };
        // The task marks the feed ended under this lock, so a feed found
        // running here hands this subscriber every event after `position`.
        let mut dispatch = shared.dispatch();
        if shared.ended.load(Ordering::Acquire) {
            return Err(ended());
        }
        let (events, queued) = mpsc::channel(QUEUE);
        let (progress, wanted) = ProgressRequester::new(shared.wake.clone());
        let position = dispatch.position;
        dispatch.subscribers.push(Subscriber {
            scope: store.keys.scope(prefix),
            events,
            wanted,
            known: position,
        });
        let events = futures::stream::unfold(queued, |mut queued| async move {
            let item = queued.recv().await?;
            Some((item, queued))
        });
        let feed = Feed {
            events: events.boxed(),
            progress,
            consistent: true,
        };
        Ok((position, feed))
    }
}

/// A running feed, shared by its task and [`Feeds`].
struct Shared {
    dispatch: Mutex<Dispatch>,
    /// Signalled by progress requests.
    wake: Arc<Notify>,
    /// Set, under the dispatch lock, when the task has stopped.
    ended: AtomicBool,
}

impl Shared {
    fn dispatch(&self) -> MutexGuard<'_, Dispatch> {
        self.dispatch.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

struct Dispatch {
    /// Every event up to this revision has been handed to the subscribers.
    position: u64,
    subscribers: Vec<Subscriber>,
}

struct Subscriber {
    scope: Scope,
    events: mpsc::Sender<Item>,
    wanted: Arc<ProgressWanted>,
    /// How far the subscriber knows the feed has got: its last event or
    /// progress report.
    known: u64,
}

/// What one step of the task hands over, outside the dispatch lock.
type Deliveries = Vec<(mpsc::Sender<Item>, Item)>;

/// Opens the watch from the store's current revision, and starts its task.
async fn start(store: &EtcdStore) -> Result<Arc<Shared>, StorageError> {
    let from = store.current_revision().await?;
    // Every key: `\0` to the end of the key space.
    let options = WatchOptions::new()
        .with_range(vec![0])
        .with_start_revision(etcd_revision(from.saturating_add(1)))
        .with_prev_key();
    let (stream, first) = bounded(store.timeout, Repeat::Safe, || {
        let (mut client, options) = (store.watch.clone(), options.clone());
        async move {
            let mut stream = client.watch(vec![0], Some(options)).await?;
            let first = stream.message().await?;
            Ok((stream, first))
        }
    })
    .await?;
    match first {
        Some(response) if response.created() && !response.canceled() => {}
        Some(response) => {
            check(&response, from)?;
            return Err(StorageError::Unavailable(
                "etcd did not confirm the watch".to_owned(),
            ));
        }
        None => return Err(ended()),
    }
    let shared = Arc::new(Shared {
        dispatch: Mutex::new(Dispatch {
            position: from,
            subscribers: Vec::new(),
        }),
        wake: Arc::new(Notify::new()),
        ended: AtomicBool::new(false),
    });
    tokio::spawn(run(shared.clone(), stream));
    Ok(shared)
}

/// Hands over the watch's events until it fails or no one subscribes.
async fn run(shared: Arc<Shared>, mut stream: WatchStream) {
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    tick.tick().await;
    let error = loop {
        let step = tokio::select! {
            message = stream.message() => match message {
                Ok(Some(response)) => absorb(&shared, &response),
                Ok(None) => Err(ended()),
                Err(err) => Err(broke(&err)),
            },
            () = shared.wake.notified() => Ok(report(&mut shared.dispatch(), false)),
            _ = tick.tick() => {
                let mut dispatch = shared.dispatch();
                dispatch.subscribers.retain(|s| !s.events.is_closed());
                if dispatch.subscribers.is_empty() {
                    shared.ended.store(true, Ordering::Release);
                    return;
                }
                Ok(report(&mut dispatch, true))
            }
        };
        match step {
            Ok(deliveries) => deliver(&shared, deliveries),
            Err(error) => break error,
        }
    };
    let subscribers = {
        let mut dispatch = shared.dispatch();
        shared.ended.store(true, Ordering::Release);
        std::mem::take(&mut dispatch.subscribers)
    };
    tracing::warn!(%error, "the etcd feed of the watch caches ended");
    for subscriber in subscribers {
        // A full queue ends with the sender dropped here: its cache reads
        // what is queued, then sees the end.
        let _ = subscriber.events.try_send(Err(error.clone()));
    }
}

/// The events of one response for each subscriber they concern, then the
/// progress reports it answers.
fn absorb(shared: &Shared, response: &WatchResponse) -> Result<Deliveries, StorageError> {
    let mut dispatch = shared.dispatch();
    check(response, dispatch.position)?;
    let mut deliveries = Vec::new();
    let position = dispatch.position;
    let mut reached = position;
    for event in response.events() {
        let Some(kv) = event.kv() else {
            continue;
        };
        reached = reached.max(super::call::revision(kv.mod_revision()));
        for subscriber in &mut dispatch.subscribers {
            if !kv.key().starts_with(subscriber.scope.etcd.as_bytes()) {
                continue;
            }
            let item = translate(&subscriber.scope, event, position);
            if let Ok(event) = &item {
                subscriber.known = subscriber.known.max(event.revision());
            }
            deliveries.push((subscriber.events.clone(), item));
        }
    }
    dispatch.position = reached;
    deliveries.extend(report(&mut dispatch, false));
    Ok(deliveries)
}

/// Progress reports at the feed's position: to each subscriber that asked
/// for a revision the feed has reached, and with `all`, to each one that
/// does not know the position yet.
fn report(dispatch: &mut Dispatch, all: bool) -> Deliveries {
    let position = dispatch.position;
    let mut deliveries = Vec::new();
    for subscriber in &mut dispatch.subscribers {
        let wanted = subscriber.wanted.revision();
        let asked = wanted > subscriber.known && wanted <= position;
        if (asked || all) && subscriber.known < position {
            subscriber.known = position;
            deliveries.push((
                subscriber.events.clone(),
                Ok(WatchEvent::Progress { revision: position }),
            ));
        }
    }
    deliveries
}

/// Queues each item in order. A subscriber that went away, or whose queue
/// is full, is dropped: the latter's cache reads what is queued, then sees
/// its feed end and lists again.
fn deliver(shared: &Shared, deliveries: Deliveries) {
    let mut dropped = Vec::new();
    for (events, item) in deliveries {
        if dropped
            .iter()
            .any(|d: &mpsc::Sender<Item>| d.same_channel(&events))
        {
            continue;
        }
        if let Err(error) = events.try_send(item) {
            if let mpsc::error::TrySendError::Full(_) = error {
                tracing::warn!("a watch cache fell behind the etcd feed; it lists again");
            }
            dropped.push(events);
        }
    }
    if !dropped.is_empty() {
        shared
            .dispatch()
            .subscribers
            .retain(|s| !dropped.iter().any(|d| d.same_channel(&s.events)));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::etcd::keys::KeyMap;

    fn subscriber(prefix: &str, capacity: usize) -> (Subscriber, mpsc::Receiver<Item>) {
        let (events, queued) = mpsc::channel(capacity);
        let (_, wanted) = ProgressRequester::new(Arc::new(Notify::new()));
        let scope = KeyMap::new("/registry").scope(prefix);
        let subscriber = Subscriber {
            scope,
            events,
            wanted,
            known: 0,
        };
        (subscriber, queued)
    }

    fn progress(revision: u64) -> Item {
        Ok(WatchEvent::Progress { revision })
    }

    /// A cache that fell behind is dropped, after what was queued, and the
    /// others still get everything.
    #[tokio::test]
    async fn a_full_queue_drops_its_subscriber_only() {
        let (slow, mut slow_queue) = subscriber("/registry/a/", 1);
        let (quick, mut quick_queue) = subscriber("/registry/b/", 8);
        let (slow_events, quick_events) = (slow.events.clone(), quick.events.clone());
        let shared = Shared {
            dispatch: Mutex::new(Dispatch {
                position: 0,
                subscribers: vec![slow, quick],
            }),
            wake: Arc::new(Notify::new()),
            ended: AtomicBool::new(false),
        };
        let deliveries = vec![
            (slow_events.clone(), progress(1)),
            (quick_events.clone(), progress(1)),
            (slow_events.clone(), progress(2)),
            (quick_events.clone(), progress(2)),
            (slow_events.clone(), progress(3)),
        ];
        drop((slow_events, quick_events));
        deliver(&shared, deliveries);

        let left: Vec<String> = shared
            .dispatch()
            .subscribers
            .iter()
            .map(|s| s.scope.caller.clone())
            .collect();
        assert_eq!(left, vec!["/registry/b/"]);
        assert_eq!(slow_queue.recv().await.unwrap(), progress(1));
        assert!(slow_queue.recv().await.is_none(), "the slow queue ends");
        assert_eq!(quick_queue.recv().await.unwrap(), progress(1));
        assert_eq!(quick_queue.recv().await.unwrap(), progress(2));
    }
}
