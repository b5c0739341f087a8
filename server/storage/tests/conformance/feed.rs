//! The feed of a watch cache: a list and the events after it, with progress.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use kapi_storage::{Feed, KeyValue, Storage, WatchEvent};
use tokio::time::timeout;

use super::b;

/// Long enough for a loaded CI machine; only failing tests wait this long.
const WAIT: Duration = Duration::from_secs(10);

/// How long a consistent read waits for its cache (the server's freshness
/// timeout): a feed that serves them must report progress on request within
/// it, not only now and then.
const ON_REQUEST: Duration = Duration::from_secs(3);

/// Applies the feed's events to `objects` until it has reached `revision`,
/// asking for progress meanwhile; returns the events of keys, in order.
async fn follow_to(
    feed: &mut Feed,
    objects: &mut BTreeMap<String, KeyValue>,
    mut reached: u64,
    revision: u64,
    wait: Duration,
) -> Vec<WatchEvent> {
    let mut seen = Vec::new();
    while reached < revision {
        feed.progress.request(revision);
        let item = timeout(wait, feed.events.next()).await;
        let event = item
            .expect("the feed did not reach the revision in time")
            .expect("the feed ended")
            .unwrap();
        assert!(
            event.revision() >= reached,
            "the feed went back from {reached}: {event:?}"
        );
        reached = event.revision();
        match &event {
            WatchEvent::Added(kv) | WatchEvent::Modified { kv, .. } => {
                objects.insert(kv.key.clone(), kv.clone());
            }
            WatchEvent::Deleted { prev, .. } => {
                objects.remove(&prev.key);
            }
            WatchEvent::Progress { .. } => continue,
        }
        seen.push(event);
    }
    seen
}

fn by_key(items: Vec<KeyValue>) -> BTreeMap<String, KeyValue> {
    items.into_iter().map(|kv| (kv.key.clone(), kv)).collect()
}

/// The list holds what was there; the feed then hands over each change under
/// the prefix, and none of the keys beside it.
pub async fn feed_lists_then_hands_over_changes_under_its_prefix(store: &dyn Storage, p: &str) {
    let (k1, k2) = (format!("{p}k1"), format!("{p}k2"));
    let beside = format!("{}-beside/x", p.trim_end_matches('/'));
    let a1 = store.create(&k1, b("v1")).await.unwrap();
    let (list, mut feed) = store.list_and_feed(p).await.unwrap();
    assert_eq!(list.items, vec![a1.clone()]);
    assert!(list.revision >= a1.mod_revision);

    let m1 = store.update(&k1, b("v2"), a1.mod_revision).await.unwrap();
    store.create(&beside, b("other")).await.unwrap();
    let a2 = store.create(&k2, b("w1")).await.unwrap();
    let d1 = store.delete(&k1, None).await.unwrap();
    let last = store.current_revision().await.unwrap();

    let mut objects = by_key(list.items);
    let seen = follow_to(&mut feed, &mut objects, list.revision, last, WAIT).await;
    let expected = vec![
        WatchEvent::Modified {
            kv: m1.clone(),
            prev: a1,
        },
        WatchEvent::Added(a2.clone()),
        WatchEvent::Deleted {
            prev: m1,
            revision: last,
        },
    ];
    assert_eq!(seen, expected);
    assert_eq!(d1.key, k1);
    assert_eq!(objects, by_key(vec![a2]));
}

/// A feed that serves consistent reads reaches the store's revision when the
/// last write was under another prefix: a cache of a resource nobody writes
/// still answers a consistent read at once.
pub async fn feed_reports_progress_past_writes_elsewhere(store: &dyn Storage, p: &str) {
    let (list, mut feed) = store.list_and_feed(p).await.unwrap();
    if !feed.consistent {
        eprintln!("  (skipped: this store's feed does not serve consistent reads)");
        return;
    }
    let elsewhere = format!("{}-elsewhere/x", p.trim_end_matches('/'));
    let written = store.create(&elsewhere, b("v")).await.unwrap();
    let mut objects = by_key(list.items);
    let seen = follow_to(
        &mut feed,
        &mut objects,
        list.revision,
        written.mod_revision,
        ON_REQUEST,
    )
    .await;
    assert_eq!(seen, Vec::new(), "events of another prefix");
}

/// Feeds started while a writer changes the prefix miss nothing: each list
/// and the events after it add up to the store's final state.
pub async fn feeds_started_during_writes_miss_nothing(store: &dyn Storage, p: &str) {
    const KEYS: usize = 8;
    const ROUNDS: usize = 25;
    let writes = async {
        for round in 0..ROUNDS {
            for k in 0..KEYS {
                let key = format!("{p}k{k}");
                let value = b(&format!("r{round}"));
                match (round + k) % 5 {
                    4 => {
                        let _ = store.delete(&key, None).await;
                    }
                    _ => match store.get(&key).await.unwrap() {
                        Some(kv) => {
                            store.update(&key, value, kv.mod_revision).await.unwrap();
                        }
                        None => {
                            store.create(&key, value).await.unwrap();
                        }
                    },
                }
            }
        }
    };
    let feeds = async {
        let mut feeds = Vec::new();
        for _ in 0..4 {
            feeds.push(store.list_and_feed(p).await.unwrap());
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        feeds
    };
    let ((), feeds) = tokio::join!(writes, feeds);
    let end = store.list(p, Default::default()).await.unwrap();
    for (list, mut feed) in feeds {
        let start = list.revision;
        let mut objects = by_key(list.items);
        follow_to(&mut feed, &mut objects, start, end.revision, WAIT).await;
        assert_eq!(
            objects,
            by_key(end.items.clone()),
            "the feed listed at {start}"
        );
    }
}
