//! Objects handed to the cache by the server's own writes: the writer holds
//! the object it stored, so the event of its write takes that object instead
//! of decoding the stored bytes and defaulting them again (upstream's cacher
//! decodes every event from etcd; the bytes decode to the object written,
//! which the debug builds check). The event often comes before the writer
//! has the store's answer, so a write tells the cache first that it is
//! under way, and the event of its key waits for it.

use std::collections::HashMap;
use std::sync::Arc;

use super::cached::Cached;

/// The objects written but not yet seen by the cache's watch, by key.
#[derive(Default)]
pub(super) struct Handoffs {
    /// The revision of the last event taken: a write at or before it has
    /// been applied already (decoded), and is not kept.
    seen: u64,
    by_key: HashMap<Box<str>, (u64, Arc<Cached>)>,
    /// The keys the server is writing now, by how many writes: an event of
    /// such a key waits for the write to hand its object over (it is
    /// usually seen before the writer has its answer back).
    writing: HashMap<Box<str>, usize>,
}

impl Handoffs {
    /// Keeps `object`, written at `key` at `revision`, for its event.
    pub fn offer(&mut self, key: &str, revision: u64, object: &Arc<Cached>) {
        if revision <= self.seen {
            return;
        }
        match self.by_key.get_mut(key) {
            Some((kept, _)) if *kept > revision => {}
            Some(slot) => *slot = (revision, object.clone()),
            None => {
                self.by_key.insert(key.into(), (revision, object.clone()));
            }
        }
    }

    /// The object handed for the event at `key` and `revision`, if its writer
    /// handed it. Events come in revision order: what was handed for the key
    /// at an earlier revision is dropped.
    pub fn take(&mut self, key: &str, revision: u64) -> Option<Arc<Cached>> {
        self.seen = self.seen.max(revision);
        let (kept, _) = self.by_key.get(key)?;
        if *kept > revision {
            return None;
        }
        let (kept, object) = self.by_key.remove(key)?;
        (kept == revision).then_some(object)
    }

    /// A write of `key` starts.
    pub fn start_write(&mut self, key: &str) {
        *self.writing.entry(key.into()).or_default() += 1;
    }

    /// A write of `key` ended (handed over, or failed).
    pub fn end_write(&mut self, key: &str) {
        if let Some(count) = self.writing.get_mut(key) {
            *count -= 1;
            if *count == 0 {
                self.writing.remove(key);
            }
        }
    }

    /// Whether the event of `key` at `revision` may be applied now: no write
    /// of the key is under way, or its object is handed over.
    pub fn ready(&self, key: &str, revision: u64) -> bool {
        !self.writing.contains_key(key)
            || self
                .by_key
                .get(key)
                .is_some_and(|(kept, _)| *kept >= revision)
    }

    /// The cache listed the store at `revision`: writes up to it are in the
    /// list.
    pub fn listed(&mut self, revision: u64) {
        self.seen = self.seen.max(revision);
        self.by_key.retain(|_, (kept, _)| *kept > revision);
    }

    /// How many objects wait for their event.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.by_key.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::body::Object;
    use kapi_api_types::core::v1::ConfigMap;

    fn object() -> Arc<Cached> {
        Cached::new(Object::new(Box::new(ConfigMap::default())))
    }

    #[test]
    fn an_event_takes_what_its_writer_handed() {
        let mut handoffs = Handoffs::default();
        let written = object();
        handoffs.offer("/registry/configmaps/a/x", 7, &written);
        assert!(handoffs.take("/registry/configmaps/a/y", 7).is_none());
        let taken = handoffs.take("/registry/configmaps/a/x", 7).unwrap();
        assert!(Arc::ptr_eq(&taken, &written));
        assert_eq!(handoffs.len(), 0);
    }

    #[test]
    fn a_write_the_cache_has_seen_is_not_kept() {
        let mut handoffs = Handoffs::default();
        assert!(handoffs.take("/registry/configmaps/a/x", 9).is_none());
        handoffs.offer("/registry/configmaps/a/x", 9, &object());
        handoffs.offer("/registry/configmaps/a/y", 8, &object());
        assert_eq!(handoffs.len(), 0);
        handoffs.offer("/registry/configmaps/a/x", 10, &object());
        handoffs.listed(10);
        assert_eq!(handoffs.len(), 0);
    }

    #[test]
    fn an_event_waits_while_its_key_is_written() {
        let mut handoffs = Handoffs::default();
        let key = "/registry/configmaps/a/x";
        assert!(handoffs.ready(key, 4));
        handoffs.start_write(key);
        handoffs.start_write(key);
        assert!(!handoffs.ready(key, 4));
        assert!(handoffs.ready("/registry/configmaps/a/y", 4));
        handoffs.offer(key, 4, &object());
        assert!(handoffs.ready(key, 4));
        assert!(!handoffs.ready(key, 5));
        handoffs.end_write(key);
        handoffs.end_write(key);
        assert!(handoffs.ready(key, 5));
    }

    #[test]
    fn a_later_event_drops_what_an_earlier_write_left() {
        let mut handoffs = Handoffs::default();
        handoffs.offer("/registry/configmaps/a/x", 3, &object());
        // Its event was missed (the cache listed again past it, say).
        assert!(handoffs.take("/registry/configmaps/a/x", 5).is_none());
        assert_eq!(handoffs.len(), 0);
        // A newer write is kept over an older one's event.
        handoffs.offer("/registry/configmaps/a/x", 8, &object());
        assert!(handoffs.take("/registry/configmaps/a/x", 6).is_none());
        assert!(handoffs.take("/registry/configmaps/a/x", 8).is_some());
    }
}
