//! What one resource's cache holds: the current objects in key order (a
//! persistent map, so a snapshot is a pointer copy), a window of recent
//! events for watches that resume, and the channel every watcher listens on.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use imbl::OrdMap;
use tokio::sync::broadcast;

use super::cached::{Cached, Event, EventType};
use super::index::Indexes;
use super::trigger::Triggers;

/// The current objects by storage key.
pub type Objects = OrdMap<Arc<str>, Arc<Cached>>;

/// The history keeps at least this many events whatever their age
/// (upstream's lower bound of the watch cache's capacity).
const MIN_EVENTS: usize = 100;

/// ... and at most this many (upstream's upper bound).
pub(super) const MAX_EVENTS: usize = 100 * 1024;

/// Events older than this are dropped once the lower bound is kept
/// (upstream's `eventFreshDuration`).
const FRESH: Duration = Duration::from_secs(75);

/// Events a watcher may fall behind the newest before it is closed (its
/// client then resumes from its last resourceVersion, or relists).
pub const WATCHER_BUFFER: usize = 1024;

/// The objects of a resource at one revision.
#[derive(Clone)]
pub struct Snapshot {
    /// The objects.
    pub objects: Objects,
    /// The revision they are current at.
    pub revision: u64,
    /// The objects' keys by the values of the kind's indexed fields.
    pub indexes: Indexes,
}

/// One resource's cached state.
pub struct State {
    /// The current objects.
    pub objects: Objects,
    /// Their keys by the values of the kind's indexed fields.
    pub indexes: Indexes,
    /// Recent events in revision order.
    pub history: VecDeque<Arc<Event>>,
    /// Every event after this revision is in `history`: a watch may resume
    /// from here or later.
    pub window_start: u64,
    /// Every event up to here has been applied.
    pub revision: u64,
    /// Whether the objects have been listed from the store yet.
    pub ready: bool,
    /// Where live events go; replaced when the cache relists, which ends the
    /// watches of the old one.
    pub events: broadcast::Sender<Arc<Event>>,
    /// Where the live events of one value of an indexed field go, for the
    /// watchers that select only that value; cleared on a relist too.
    pub triggers: Triggers,
    /// Keys whose stored value could not be decoded: reads delegate to the
    /// store while there are any, so that they fail as they would there.
    pub undecodable: BTreeSet<Arc<str>>,
}

impl State {
    /// An empty state, not ready, indexing `indexed` fields.
    pub fn new(indexed: &'static [&'static str]) -> State {
        State {
            objects: Objects::new(),
            indexes: Indexes::new(indexed),
            history: VecDeque::new(),
            window_start: 0,
            revision: 0,
            ready: false,
            events: broadcast::channel(WATCHER_BUFFER).0,
            triggers: Triggers::new(indexed),
            undecodable: BTreeSet::new(),
        }
    }

    /// Starts over from a list of the store at `revision`: the history is
    /// gone, and so are the watchers of the old state.
    pub fn replace(
        &mut self,
        (objects, indexes): (Objects, Indexes),
        undecodable: BTreeSet<Arc<str>>,
        revision: u64,
    ) {
        self.objects = objects;
        self.indexes = indexes;
        self.undecodable = undecodable;
        self.history.clear();
        self.window_start = revision;
        self.revision = revision;
        self.ready = true;
        self.events = broadcast::channel(WATCHER_BUFFER).0;
        self.triggers.clear();
    }

    /// The objects as they are now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            objects: self.objects.clone(),
            revision: self.revision,
            indexes: self.indexes.clone(),
        }
    }

    /// Applies one change and tells the watchers.
    pub fn apply(&mut self, event: Arc<Event>) {
        let key = event.key.clone();
        match event.type_ {
            EventType::Added | EventType::Modified => {
                let prev = self.objects.insert(key.clone(), event.object.clone());
                self.indexes
                    .update(&key, prev.as_deref(), Some(&event.object));
            }
            EventType::Deleted => self.forget(&key),
        }
        self.undecodable.remove(&key);
        self.revision = self.revision.max(event.revision);
        self.history.push_back(event.clone());
        // At most one event goes per event that comes, unless the feed's
        // expiry has not run for a while: freed under the lock.
        self.trim();
        self.triggers.send(&event);
        // No receiver just means no watcher right now.
        let _ = self.events.send(event);
    }

    /// Drops the object at `key`, if any.
    pub fn forget(&mut self, key: &Arc<str>) {
        let prev = self.objects.remove(key);
        self.indexes.update(key, prev.as_deref(), None);
    }

    /// Drops the oldest events beyond the window's bounds, as the answer is
    /// consumed or dropped (a caller may collect them to free them outside
    /// the cache's lock).
    pub fn trim(&mut self) -> std::collections::vec_deque::Drain<'_, Arc<Event>> {
        let len = self.history.len();
        let beyond = |(i, event): &(usize, &Arc<Event>)| {
            let left = len - i;
            left > MAX_EVENTS || (left > MIN_EVENTS && event.at.elapsed() > FRESH)
        };
        let stale = self.history.iter().enumerate().take_while(beyond).count();
        if let Some(newest) = stale.checked_sub(1).and_then(|i| self.history.get(i)) {
            self.window_start = newest.revision;
        }
        self.history.drain(..stale)
    }

    /// The events after `revision`, when the window still holds all of them.
    pub fn events_after(&self, revision: u64) -> Option<Vec<Arc<Event>>> {
        if revision < self.window_start {
            return None;
        }
        let start = self.history.partition_point(|e| e.revision <= revision);
        Some(self.history.range(start..).cloned().collect())
    }
}
