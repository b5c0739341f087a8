//! Watch (replay, live, predicates) and compaction.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kapi_storage::{
    KeyValue, ListOptions, Predicate, Storage, StorageError, WatchEvent, WatchStream,
};
use tokio::time::timeout;

use super::b;

/// Long enough for a loaded CI machine; only failing tests wait this long.
const WAIT: Duration = Duration::from_secs(10);
/// How long "no further event" is given to show up.
const QUIET: Duration = Duration::from_millis(300);

async fn next(stream: &mut WatchStream) -> WatchEvent {
    let item = timeout(WAIT, stream.next())
        .await
        .expect("no event in time");
    item.expect("watch stream ended").unwrap()
}

async fn assert_quiet(stream: &mut WatchStream) {
    if let Ok(item) = timeout(QUIET, stream.next()).await {
        panic!("unexpected watch item: {item:?}");
    }
}

async fn watch(store: &dyn Storage, p: &str, from: u64, pred: Option<Predicate>) -> WatchStream {
    store.watch(p, from, pred).await.unwrap()
}

/// A prefix next to `p` that shares its text but not its trailing slash.
fn sibling(p: &str) -> String {
    format!("{}-sibling/", p.trim_end_matches('/'))
}

pub async fn watch_replays_then_continues_live(store: &dyn Storage, p: &str) {
    let r0 = store.current_revision().await.unwrap();
    let (k1, k2) = (format!("{p}k1"), format!("{p}k2"));
    let a1 = store.create(&k1, b("v1")).await.unwrap();
    let m1 = store.update(&k1, b("v2"), a1.mod_revision).await.unwrap();
    store
        .create(&format!("{}x", sibling(p)), b("other"))
        .await
        .unwrap();
    let a2 = store.create(&k2, b("w1")).await.unwrap();
    store.delete(&k1, None).await.unwrap();

    let mut w = watch(store, p, r0, None).await;
    assert_eq!(next(&mut w).await, WatchEvent::Added(a1.clone()));
    let modified = WatchEvent::Modified {
        kv: m1.clone(),
        prev: a1,
    };
    assert_eq!(next(&mut w).await, modified);
    assert_eq!(next(&mut w).await, WatchEvent::Added(a2.clone()));
    match next(&mut w).await {
        WatchEvent::Deleted { prev, revision } => {
            assert_eq!(prev, m1);
            assert!(revision > a2.mod_revision);
        }
        other => panic!("expected a delete, got {other:?}"),
    }
    assert_quiet(&mut w).await;

    let m2 = store.update(&k2, b("w2"), a2.mod_revision).await.unwrap();
    let live = WatchEvent::Modified { kv: m2, prev: a2 };
    assert_eq!(next(&mut w).await, live);
    assert_quiet(&mut w).await;
}

pub async fn watch_from_a_middle_revision(store: &dyn Storage, p: &str) {
    let k = format!("{p}k");
    let v1 = store.create(&k, b("1")).await.unwrap();
    let v2 = store.update(&k, b("2"), v1.mod_revision).await.unwrap();
    let v3 = store.update(&k, b("3"), v2.mod_revision).await.unwrap();

    let mut w = watch(store, p, v1.mod_revision, None).await;
    let e2 = WatchEvent::Modified {
        kv: v2.clone(),
        prev: v1,
    };
    assert_eq!(next(&mut w).await, e2);
    let e3 = WatchEvent::Modified {
        kv: v3.clone(),
        prev: v2,
    };
    assert_eq!(next(&mut w).await, e3);
    assert_quiet(&mut w).await;

    // From the latest revision: nothing to replay, then live events only.
    let mut latest = watch(store, p, v3.mod_revision, None).await;
    assert_quiet(&mut latest).await;
    let v4 = store.update(&k, b("4"), v3.mod_revision).await.unwrap();
    let e4 = WatchEvent::Modified { kv: v4, prev: v3 };
    assert_eq!(next(&mut latest).await, e4);
    assert_eq!(next(&mut w).await, e4);
}

/// Objects moving in and out of the predicate are ADDED and DELETED for the
/// watcher, the same whether the events are replayed or live.
pub async fn watch_translates_predicate_transitions(store: &dyn Storage, p: &str) {
    let blue: Predicate = Arc::new(|kv: &KeyValue| kv.value.starts_with(b"blue"));
    let r0 = store.current_revision().await.unwrap();
    let mut live = watch(store, p, r0, Some(blue.clone())).await;

    let k = format!("{p}k");
    let c = store.create(&k, b("blue")).await.unwrap();
    let red = store.update(&k, b("red"), c.mod_revision).await.unwrap();
    let green = store
        .update(&k, b("green"), red.mod_revision)
        .await
        .unwrap();
    let blue2 = store
        .update(&k, b("blue-2"), green.mod_revision)
        .await
        .unwrap();
    let blue3 = store
        .update(&k, b("blue-3"), blue2.mod_revision)
        .await
        .unwrap();
    let other = store.create(&format!("{p}other"), b("red")).await.unwrap();
    store.delete(&other.key, None).await.unwrap();
    store.delete(&k, None).await.unwrap();
    let end = store.current_revision().await.unwrap();

    let expected = [
        WatchEvent::Added(c.clone()),
        WatchEvent::Deleted {
            prev: c,
            revision: red.mod_revision,
        },
        WatchEvent::Added(blue2.clone()),
        WatchEvent::Modified {
            kv: blue3.clone(),
            prev: blue2,
        },
    ];
    let mut replay = watch(store, p, r0, Some(blue)).await;
    for stream in [&mut live, &mut replay] {
        for event in &expected {
            assert_eq!(&next(stream).await, event);
        }
        match next(stream).await {
            WatchEvent::Deleted { prev, revision } => {
                assert_eq!(prev, blue3);
                assert!(revision > blue3.mod_revision && revision <= end);
            }
            other => panic!("expected the final delete, got {other:?}"),
        }
        assert_quiet(stream).await;
    }
}

/// Compaction expires lists and watches below the compacted revision and keeps
/// everything needed at and after it. Runs last: it compacts the whole store.
pub async fn compaction_expires_old_revisions(store: &dyn Storage, p: &str) {
    let k = format!("{p}k");
    let v1 = store.create(&k, b("v1")).await.unwrap();
    let gone = store.create(&format!("{p}gone"), b("g")).await.unwrap();
    let v2 = store.update(&k, b("v2"), v1.mod_revision).await.unwrap();
    let target = store.current_revision().await.unwrap();
    store.delete(&gone.key, None).await.unwrap();
    let v3 = store.update(&k, b("v3"), v2.mod_revision).await.unwrap();

    store.compact(target).await.unwrap();
    assert!(store.compacted_revision().await.unwrap() >= target);

    let at = |revision| ListOptions {
        revision,
        ..ListOptions::default()
    };
    let old = store.list(p, at(target)).await.unwrap();
    assert_eq!(old.items, [gone.clone(), v2.clone()]);
    let err = store.list(p, at(target - 1)).await.unwrap_err();
    assert!(matches!(err, StorageError::Expired { .. }), "{err:?}");
    match store.watch(p, target - 1, None).await {
        Err(StorageError::Expired { .. }) => {}
        Err(other) => panic!("expected Expired, got {other:?}"),
        Ok(_) => panic!("watch from a compacted revision must be Expired"),
    }

    // From the compacted revision itself, everything after it replays.
    let mut w = watch(store, p, target, None).await;
    match next(&mut w).await {
        WatchEvent::Deleted { prev, .. } => assert_eq!(prev, gone),
        other => panic!("expected the delete, got {other:?}"),
    }
    let modified = WatchEvent::Modified { kv: v3, prev: v2 };
    assert_eq!(next(&mut w).await, modified);
    assert_quiet(&mut w).await;

    let current = store.current_revision().await.unwrap();
    let err = store.compact(current + 1000).await.unwrap_err();
    assert!(
        matches!(err, StorageError::TooLargeRevision { .. }),
        "{err:?}"
    );
}

/// A key written to expire is deleted once its time runs out (a delete
/// watches see, as etcd's lease expiry); writing it again without a TTL
/// keeps it, and with a longer one keeps it for that long.
pub async fn expiring_keys_are_deleted_when_their_time_runs_out(store: &dyn Storage, p: &str) {
    let from = store.current_revision().await.unwrap();
    let mut stream = watch(store, p, from, None).await;
    let ttl = Duration::from_secs(1);
    let (a, b_key, c, keep) = (
        format!("{p}a"),
        format!("{p}b"),
        format!("{p}c"),
        format!("{p}keep"),
    );
    store.create_expiring(&a, b("a"), ttl).await.unwrap();
    let made = store.create_expiring(&b_key, b("b"), ttl).await.unwrap();
    store
        .update(&b_key, b("b2"), made.mod_revision)
        .await
        .unwrap();
    let made = store.create_expiring(&c, b("c"), ttl).await.unwrap();
    store
        .update_expiring(&c, b("c2"), made.mod_revision, Duration::from_secs(60))
        .await
        .unwrap();
    store.create(&keep, b("keep")).await.unwrap();
    let mut deleted = Vec::new();
    // Six writes, then the expiry.
    for _ in 0..7 {
        if let WatchEvent::Deleted { prev, .. } = next(&mut stream).await {
            deleted.push(prev.key);
            break;
        }
    }
    assert_eq!(deleted, vec![a.clone()]);
    assert!(store.get(&a).await.unwrap().is_none());
    for key in [&b_key, &c, &keep] {
        assert!(store.get(key).await.unwrap().is_some(), "{key} expired");
    }
    assert_quiet(&mut stream).await;
}
