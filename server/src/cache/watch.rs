//! Watches from the cache: where a watcher starts (the current objects, or
//! the window's events after its revision), the live events it receives,
//! and how an event looks through its selectors.

use std::sync::Arc;

use tokio::sync::{broadcast, watch as signal};

use super::ResourceCache;
use super::cached::{Cached, Event, EventType};
use super::state::Snapshot;
use crate::selectors::Matches;
use crate::selectors::field::FieldSelector;

/// Where a watch starts.
pub enum Start {
    /// Every current object, as ADDED events (a watch without a revision,
    /// or one that asked for its initial events).
    Snapshot(Snapshot),
    /// The events after the watcher's revision still in the window.
    History(Vec<Arc<Event>>),
}

/// A watcher's view of the cache.
pub struct Subscription {
    /// What it gets first.
    pub start: Start,
    /// Live events after `start`; an event at or below `from` is already
    /// covered by it.
    pub live: broadcast::Receiver<Arc<Event>>,
    /// The revision `start` stands at.
    pub from: u64,
    /// How far the cache has got (for bookmarks while nothing happens).
    pub reached: signal::Receiver<Option<u64>>,
}

impl ResourceCache {
    /// Subscribes a watcher: from the current objects (`from` = `None`), or
    /// from the events after revision `from`. `None` when the cache cannot
    /// serve it: not listed yet, holding what it cannot decode, or `from`
    /// before its window. A watcher whose field selector (`narrow`) pins
    /// an indexed field gets only the live events of that value's objects;
    /// it must still apply its selectors.
    pub fn subscribe(
        &self,
        from: Option<u64>,
        narrow: Option<&FieldSelector>,
    ) -> Option<Subscription> {
        // A write lock: a triggered watcher may add its value's channel.
        let mut state = self.inner.write();
        if !state.ready || !state.undecodable.is_empty() {
            return None;
        }
        // Taken under the lock the feed applies events under: every event
        // is either in the start or on the channel, never both or neither.
        let (start, from) = match from {
            None => (Start::Snapshot(state.snapshot()), state.revision),
            Some(revision) => (Start::History(state.events_after(revision)?), revision),
        };
        let triggered = narrow.and_then(|fields| state.triggers.subscribe(fields));
        Some(Subscription {
            start,
            live: triggered.unwrap_or_else(|| state.events.subscribe()),
            from,
            reached: self.inner.revision.subscribe(),
        })
    }
}

/// How a watcher of the keys under `prefix` whose selectors are `matches`
/// sees `event`, as the store's watch filter does: an object that stops
/// matching is DELETED (its previous state at the event's revision), one
/// that starts matching ADDED.
pub fn visible(
    event: &Event,
    prefix: &str,
    matches: Option<&Matches<'_>>,
) -> Option<(EventType, Arc<Cached>)> {
    if !event.key.starts_with(prefix) {
        return None;
    }
    let Some(matches) = matches else {
        return Some((event.type_, event.object.clone()));
    };
    match (event.type_, &event.prev) {
        (EventType::Modified, Some(prev)) => {
            match (matches(&**prev), matches(&*event.object)) {
                (true, true) => Some((EventType::Modified, event.object.clone())),
                (false, true) => Some((EventType::Added, event.object.clone())),
                (true, false) => {
                    // Its last state as the watcher saw it; skipped, as
                    // what does not decode is, if it cannot be had.
                    let mut last = prev.object().ok()?.clone();
                    last.metadata_mut().resource_version = Some(event.revision.to_string());
                    Some((EventType::Deleted, Cached::new(last)))
                }
                (false, false) => None,
            }
        }
        (type_, _) => matches(&*event.object).then(|| (type_, event.object.clone())),
    }
}
