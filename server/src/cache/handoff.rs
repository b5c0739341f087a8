//! Objects handed to the cache by the server's own writes: the writer holds
//! the object it stored, so the event of its write takes that object instead
//! of decoding the stored bytes and defaulting them again (upstream's cacher
//! decodes every event from etcd; the bytes decode to the object written,
//! which the debug builds check).

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
