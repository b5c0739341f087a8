//! The etcd backend on a real etcd that each test starts on free loopback
//! ports: the conformance suite unchanged, then what only etcd involves (the key
//! layout an operator sees, prefixes, progress notifications, lists read in
//! several ranges). Compaction and connection tests have files of their own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod conformance;
mod etcd_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use conformance::b;
use etcd_support::{EtcdCluster, etcd_available, store_on};
use futures::StreamExt;
use kapi_storage::{KeyValue, ListOptions, Predicate, Storage, StorageError, WatchEvent};

/// Long enough for a loaded CI machine; only failing tests wait this long.
const WAIT: Duration = Duration::from_secs(20);

async fn next_event(w: &mut kapi_storage::WatchStream) -> WatchEvent {
    let item = tokio::time::timeout(WAIT, w.next()).await;
    item.expect("no watch event in time")
        .expect("watch stream ended")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::single().await;
    let store = store_on(&etcd, "/registry").await;
    conformance::run_all(&store).await;
}

/// An operator reading etcd sees Kubernetes' layout: the key as given, the
/// value as written (JSON), the resourceVersion only in etcd's mod revision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_and_values_are_stored_as_given() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::single().await;
    let store = store_on(&etcd, "/registry").await;
    let key = "/registry/configmaps/default/app";
    let json = br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"app"}}"#;
    let created = store
        .create(key, b(std::str::from_utf8(json).unwrap()))
        .await
        .unwrap();

    let mut raw = etcd.raw_client().await;
    let response = raw.get(key, None).await.unwrap();
    let stored = &response.kvs()[0];
    assert_eq!(stored.value(), json);
    assert_eq!(stored.mod_revision() as u64, created.mod_revision);
    assert_eq!(stored.create_revision() as u64, created.create_revision);
    let text = std::str::from_utf8(stored.value()).unwrap();
    assert!(!text.contains("resourceVersion"));
}

/// Two clusters share one etcd under different prefixes: the leading
/// `/registry` is replaced by the prefix, and neither sees the other's keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefix_maps_the_registry_root_and_isolates_clusters() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::single().await;
    let a = store_on(&etcd, "/registry").await;
    let b_store = store_on(&etcd, "/cluster-b/").await;
    let key = "/registry/configmaps/ns/x";
    let r0 = a.current_revision().await.unwrap();
    let mut watch_a = a.watch("/registry/", r0, None).await.unwrap();
    let mut watch_b = b_store
        .watch("/registry/configmaps/", r0, None)
        .await
        .unwrap();

    let in_b = b_store.create(key, b("from b")).await.unwrap();
    assert_eq!(in_b.key, key);
    let mut raw = etcd.raw_client().await;
    let stored = raw.get("/cluster-b/configmaps/ns/x", None).await.unwrap();
    assert_eq!(stored.kvs()[0].value(), b"from b");
    assert!(raw.get(key, None).await.unwrap().kvs().is_empty());

    assert_eq!(a.get(key).await.unwrap(), None);
    assert_eq!(b_store.get(key).await.unwrap(), Some(in_b.clone()));
    let listed = b_store
        .list("/registry/configmaps/", ListOptions::default())
        .await
        .unwrap();
    assert_eq!(listed.items, std::slice::from_ref(&in_b));
    assert!(
        a.list("/registry/", ListOptions::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    assert_eq!(next_event(&mut watch_b).await, WatchEvent::Added(in_b));

    // A's own write is the first thing its watch sees.
    let in_a = a.create(key, b("from a")).await.unwrap();
    assert_eq!(next_event(&mut watch_a).await, WatchEvent::Added(in_a));
}

/// Idle watches get etcd's progress notifications as Progress events, and a
/// progress never goes below an event already delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_watch_gets_progress_events() {
    if !etcd_available() {
        return;
    }
    let etcd =
        EtcdCluster::start(1, &["--experimental-watch-progress-notify-interval=300ms"]).await;
    let store = store_on(&etcd, "/registry").await;
    let r0 = store.current_revision().await.unwrap();
    let mut w = store.watch("/registry/widgets/", r0, None).await.unwrap();
    match next_event(&mut w).await {
        WatchEvent::Progress { revision } => assert!(revision >= r0),
        other => panic!("expected a progress event, got {other:?}"),
    }
    // Writes elsewhere move the progress revision; writes under the prefix
    // come as events first.
    let elsewhere = store.create("/registry/other/x", b("x")).await.unwrap();
    let mine = store.create("/registry/widgets/a", b("a")).await.unwrap();
    let mut seen_added = false;
    let deadline = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < deadline, "no progress after the writes");
        match next_event(&mut w).await {
            WatchEvent::Added(kv) => {
                assert_eq!(kv, mine);
                seen_added = true;
            }
            WatchEvent::Progress { revision } if revision >= mine.mod_revision => {
                assert!(seen_added, "progress past an event not yet delivered");
                break;
            }
            WatchEvent::Progress { revision } => assert!(revision >= r0),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(elsewhere.mod_revision < mine.mod_revision);
}

/// Lists read in several ranges stay exact: a sparse predicate with a small
/// limit, and an unlimited list larger than one range.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_spanning_many_ranges() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::single().await;
    let store = store_on(&etcd, "/registry").await;
    let writers = (0..16).map(|task| {
        let store = store.clone();
        tokio::spawn(async move {
            for i in (task..1100).step_by(16) {
                let value = if i % 100 == 7 { "rare" } else { "common" };
                store
                    .create(&format!("/registry/many/{i:05}"), b(value))
                    .await
                    .unwrap();
            }
        })
    });
    for writer in writers {
        writer.await.unwrap();
    }
    let all = store
        .list("/registry/many/", ListOptions::default())
        .await
        .unwrap();
    assert_eq!(all.items.len(), 1100);
    assert!(all.items.windows(2).all(|w| w[0].key < w[1].key));
    assert_eq!(all.continue_after, None);

    let rare: Predicate = Arc::new(|kv: &KeyValue| kv.value.as_ref() == b"rare");
    let mut seen = Vec::new();
    let mut opts = ListOptions {
        limit: 3,
        predicate: Some(rare),
        ..ListOptions::default()
    };
    loop {
        let page = store.list("/registry/many/", opts.clone()).await.unwrap();
        seen.extend(page.items.iter().map(|kv| kv.key.clone()));
        match page.continue_after {
            Some(last) => {
                opts.start_after = Some(last);
                opts.revision = page.revision;
            }
            None => break,
        }
    }
    let expected: Vec<String> = (0..11)
        .map(|i| format!("/registry/many/{:05}", i * 100 + 7))
        .collect();
    assert_eq!(seen, expected);
}

/// Values too large to compare inside the transaction take the read-first
/// path: an unchanged one still writes nothing, a stale one still conflicts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_values_update_like_small_ones() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::single().await;
    let store = store_on(&etcd, "/registry").await;
    let big = "x".repeat(200 * 1024);
    let v1 = store.create("/registry/big/a", b(&big)).await.unwrap();
    let revision = store.current_revision().await.unwrap();
    let same = store
        .update(&v1.key, b(&big), v1.mod_revision)
        .await
        .unwrap();
    assert_eq!(same, v1);
    assert_eq!(store.current_revision().await.unwrap(), revision);
    let bigger = format!("{big}y");
    let v2 = store
        .update(&v1.key, b(&bigger), v1.mod_revision)
        .await
        .unwrap();
    assert_eq!(v2.value.len(), big.len() + 1);
    let stale = store.update(&v1.key, b(&big), v1.mod_revision).await;
    assert_eq!(stale, Err(StorageError::Conflict(v1.key.clone())));
}
