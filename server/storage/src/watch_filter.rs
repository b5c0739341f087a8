//! The predicate half of a watch, shared by every backend so that each one gives
//! watchers the same Kubernetes semantics.

use crate::{Predicate, WatchEvent};

/// Filters one event for a watcher of `prefix` with an optional predicate.
///
/// A modification is judged on both sides, as k8s.io/apiserver's etcd3 watcher
/// does: an object that stops matching is seen as DELETED (with its old value),
/// one that starts matching as ADDED, so a watcher's view stays equal to what a
/// list with the same predicate would return. [`WatchEvent::Progress`] is about
/// no key and passes through: it holds for every prefix and predicate.
pub fn filter_event(
    event: WatchEvent,
    prefix: &str,
    predicate: Option<&Predicate>,
) -> Option<WatchEvent> {
    if let WatchEvent::Progress { .. } = event {
        return Some(event);
    }
    if !event.key().starts_with(prefix) {
        return None;
    }
    let Some(matches) = predicate else {
        return Some(event);
    };
    match event {
        WatchEvent::Added(kv) => matches(&kv).then_some(WatchEvent::Added(kv)),
        WatchEvent::Deleted { prev, revision } => {
            matches(&prev).then_some(WatchEvent::Deleted { prev, revision })
        }
        WatchEvent::Modified { kv, prev } => match (matches(&prev), matches(&kv)) {
            (true, true) => Some(WatchEvent::Modified { kv, prev }),
            (false, true) => Some(WatchEvent::Added(kv)),
            (true, false) => Some(WatchEvent::Deleted {
                revision: kv.mod_revision,
                prev,
            }),
            (false, false) => None,
        },
        progress @ WatchEvent::Progress { .. } => Some(progress),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bytes::Bytes;

    use super::*;
    use crate::KeyValue;

    fn kv(key: &str, value: &'static str, rev: u64) -> KeyValue {
        KeyValue {
            key: key.to_owned(),
            value: Bytes::from_static(value.as_bytes()),
            create_revision: 1,
            mod_revision: rev,
        }
    }

    fn blue() -> Predicate {
        Arc::new(|kv: &KeyValue| kv.value.as_ref() == b"blue")
    }

    #[test]
    fn other_prefixes_are_dropped() {
        let event = WatchEvent::Added(kv("/ab/x", "blue", 1));
        assert_eq!(filter_event(event, "/a/", None), None);
    }

    #[test]
    fn progress_passes_every_prefix_and_predicate() {
        let event = WatchEvent::Progress { revision: 7 };
        assert_eq!(
            filter_event(event.clone(), "/a/", Some(&blue())),
            Some(event)
        );
    }

    #[test]
    fn modification_out_of_the_predicate_is_a_delete_of_the_old_value() {
        let event = WatchEvent::Modified {
            kv: kv("/a/x", "red", 2),
            prev: kv("/a/x", "blue", 1),
        };
        let expected = WatchEvent::Deleted {
            prev: kv("/a/x", "blue", 1),
            revision: 2,
        };
        assert_eq!(filter_event(event, "/a/", Some(&blue())), Some(expected));
    }

    #[test]
    fn modification_into_the_predicate_is_an_add() {
        let event = WatchEvent::Modified {
            kv: kv("/a/x", "blue", 2),
            prev: kv("/a/x", "red", 1),
        };
        let expected = WatchEvent::Added(kv("/a/x", "blue", 2));
        assert_eq!(filter_event(event, "/a/", Some(&blue())), Some(expected));
    }

    #[test]
    fn modification_outside_the_predicate_is_dropped() {
        let event = WatchEvent::Modified {
            kv: kv("/a/x", "green", 2),
            prev: kv("/a/x", "red", 1),
        };
        assert_eq!(filter_event(event, "/a/", Some(&blue())), None);
    }
}
