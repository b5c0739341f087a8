//! The watches a write will wake, counted for its seats (upstream's watch
//! tracker and mutating work estimator).
//!
//! Each admitted watch counts under its group, resource, namespace and name
//! (`""` for all) while it runs. A create, update, patch or delete then costs
//! one seat plus, when ten or more watches may see its event, one seat per
//! ten of them (up to its level's maximum) held `EVENT_COST` longer after
//! it finishes: the work of sending the event to every watcher, which goes on
//! after the answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::request_info::{ResourceRef, Verb};

/// Watches one extra seat stands for.
const WATCHES_PER_SEAT: u32 = 10;

/// How long the extra seats of one event are held.
const EVENT_COST: Duration = Duration::from_millis(5);

/// What a request costs: seats while it executes, and how long they stay
/// taken after it finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    pub seats: u32,
    pub linger: Duration,
}

/// Group, resource, namespace and name, each followed by a NUL (which none
/// of them holds), so that one buffer serves a write's three lookups.
type Key = String;

fn key_into(key: &mut String, parts: [&str; 4]) {
    for part in parts {
        key.push_str(part);
        key.push('\0');
    }
}

/// The watches running now, by what they watch.
#[derive(Default)]
pub struct Watches {
    counts: Arc<Mutex<HashMap<Key, u32>>>,
}

/// A watch counted until it is dropped.
pub struct Counted {
    counts: Arc<Mutex<HashMap<Key, u32>>>,
    key: Key,
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = counts.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

impl Watches {
    /// Counts a watch (`None` for any other request) while the returned guard
    /// lives. A watch of pods on one node (`spec.nodeName=...`) is not
    /// counted, as upstream: its events are a small part of the pods'.
    pub fn register(
        &self,
        request: &ResourceRef<'_>,
        field_selector: Option<&str>,
    ) -> Option<Counted> {
        if request.verb != Verb::Watch {
            return None;
        }
        let selector = field_selector.unwrap_or_default();
        if request.group.is_empty()
            && request.resource == "pods"
            && exact_value(&selector, "spec.nodeName").is_some_and(|node| !node.is_empty())
        {
            return None;
        }
        let name = request
            .name
            .or_else(|| exact_value(&selector, "metadata.name"))
            .unwrap_or_default();
        let mut key = Key::new();
        key_into(
            &mut key,
            [
                request.group,
                request.resource,
                request.namespace.unwrap_or_default(),
                name,
            ],
        );
        *self
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key.clone())
            .or_default() += 1;
        Some(Counted {
            counts: self.counts.clone(),
            key,
        })
    }

    /// The watches that may see the event of `request`: those of its whole
    /// resource, of its namespace and of its object. `None` for a request
    /// that writes nothing.
    pub fn interested(&self, request: &ResourceRef<'_>) -> Option<u32> {
        if !matches!(
            request.verb,
            Verb::Create | Verb::Update | Verb::Patch | Verb::Delete
        ) {
            return None;
        }
        // A token of a service account is made, not stored.
        if request.resource == "serviceaccounts" && request.subresource == Some("token") {
            return None;
        }
        let counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        if counts.is_empty() {
            return Some(0);
        }
        let mut key = Key::new();
        let mut count = |namespace: &str, name: &str| {
            key.clear();
            key_into(&mut key, [request.group, request.resource, namespace, name]);
            counts.get(&key).copied().unwrap_or(0)
        };
        let namespace = request.namespace.unwrap_or_default();
        let mut watching = count("", "");
        if !namespace.is_empty() {
            watching += count(namespace, "");
        }
        if let Some(name) = request.name {
            watching += count(namespace, name);
        }
        Some(watching)
    }
}

/// The cost of a write seen by `watching` watches, on a level whose requests
/// take at most `max_seats`.
pub fn estimate(watching: u32, max_seats: u32) -> Estimate {
    if watching < WATCHES_PER_SEAT {
        return Estimate {
            seats: 1,
            linger: Duration::ZERO,
        };
    }
    let wanted = watching.div_ceil(WATCHES_PER_SEAT);
    let cap = match max_seats {
        0 => super::config::MAX_SEATS_LIMIT,
        seats => seats.min(super::config::MAX_SEATS_LIMIT),
    };
    let seats = wanted.min(cap);
    // The same work (seats × time) on fewer seats takes longer.
    let linger = EVENT_COST * wanted / seats;
    Estimate { seats, linger }
}

/// The value `field=value` or `field==value` pins in a field selector.
fn exact_value<'a>(selector: &'a str, field: &str) -> Option<&'a str> {
    selector.split(',').find_map(|term| {
        let rest = term.trim().strip_prefix(field)?;
        rest.strip_prefix("==")
            .or_else(|| rest.strip_prefix('='))
            .map(str::trim)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use axum::http::Method;

    use super::*;
    use crate::request_info::{RequestInfo, parse_ref};

    #[test]
    fn writes_count_the_watches_of_their_resource_namespace_and_object() {
        let watches = Watches::default();
        let watch = |path: &str, query: &str| {
            let info = RequestInfo::parse(&Method::GET, path, Some(query));
            watches.register(
                &info.resource().unwrap(),
                info.query.field_selector.as_deref(),
            )
        };
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(watch("/api/v1/configmaps", "watch=1"));
        }
        held.push(watch("/api/v1/namespaces/a/configmaps", "watch=1"));
        held.push(watch("/api/v1/namespaces/b/configmaps", "watch=1"));
        held.push(watch(
            "/api/v1/namespaces/a/configmaps",
            "watch=1&fieldSelector=metadata.name%3Dx",
        ));
        // A kubelet's watch of its node's pods is not counted.
        held.push(watch(
            "/api/v1/pods",
            "watch=1&fieldSelector=spec.nodeName%3Dn1",
        ));
        assert!(held[6].is_none());

        let write = |method: Method, path: &str| {
            let request = parse_ref(&method, path, false).unwrap();
            watches.interested(&request)
        };
        assert_eq!(
            write(Method::POST, "/api/v1/namespaces/a/configmaps"),
            Some(4)
        );
        assert_eq!(
            write(Method::PUT, "/api/v1/namespaces/a/configmaps/x"),
            Some(5)
        );
        assert_eq!(
            write(Method::DELETE, "/api/v1/namespaces/b/configmaps/x"),
            Some(4)
        );
        assert_eq!(write(Method::POST, "/api/v1/namespaces/a/pods"), Some(0));
        assert_eq!(
            write(Method::GET, "/api/v1/namespaces/a/configmaps/x"),
            None
        );
        assert_eq!(
            write(Method::DELETE, "/api/v1/namespaces/a/configmaps"),
            None
        );

        // Watches that end are no longer counted.
        held.truncate(1);
        assert_eq!(
            write(Method::PUT, "/api/v1/namespaces/a/configmaps/x"),
            Some(1)
        );
    }

    #[test]
    fn many_watchers_cost_extra_seats_for_a_while() {
        let none = Estimate {
            seats: 1,
            linger: Duration::ZERO,
        };
        assert_eq!(estimate(0, 10), none);
        assert_eq!(estimate(9, 10), none);
        assert_eq!(
            estimate(25, 10),
            Estimate {
                seats: 3,
                linger: Duration::from_millis(5)
            }
        );
        // Capped seats hold on longer, for the same work.
        assert_eq!(
            estimate(250, 10),
            Estimate {
                seats: 10,
                linger: Duration::from_micros(12_500)
            }
        );
        assert_eq!(
            estimate(250, 4),
            Estimate {
                seats: 4,
                linger: Duration::from_micros(31_250)
            }
        );
    }
}
