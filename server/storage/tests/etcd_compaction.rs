//! Compaction on a real etcd: a compaction made by someone else, and the
//! compactors of several replicas sharing one etcd (Kubernetes' protocol).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod etcd_support;

use std::time::{Duration, Instant};

use bytes::Bytes;
use etcd_client::GetOptions;
use etcd_support::{EtcdCluster, etcd_available, store_on};
use futures::StreamExt;
use kapi_storage::etcd::{COMPACT_REV_KEY, CompactionRound, Compactor, run_compactor};
use kapi_storage::{ListOptions, Storage, StorageError};

/// Long enough for a loaded CI machine; only failing tests wait this long.
const WAIT: Duration = Duration::from_secs(20);

fn b(value: &str) -> Bytes {
    Bytes::copy_from_slice(value.as_bytes())
}

/// A compaction made by someone else (no record of it) still ends a watch
/// from before it: with an Expired item, never with a silent gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_below_a_foreign_compaction_ends_expired() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::single().await;
    let store = store_on(&etcd, "/registry").await;
    let first = store.create("/registry/c/a", b("1")).await.unwrap();
    store
        .update(&first.key, b("2"), first.mod_revision)
        .await
        .unwrap();
    let third = store.create("/registry/c/b", b("3")).await.unwrap();
    let mut raw = etcd.raw_client().await;
    raw.compact(third.mod_revision as i64, None).await.unwrap();

    let mut w = store
        .watch("/registry/c/", first.mod_revision - 1, None)
        .await
        .unwrap();
    let item = tokio::time::timeout(WAIT, w.next()).await.unwrap();
    assert!(
        matches!(item, Some(Err(StorageError::Expired { .. }))),
        "{item:?}"
    );
    assert!(w.next().await.is_none());

    let listed = store
        .list(
            "/registry/c/",
            ListOptions {
                revision: first.mod_revision,
                ..ListOptions::default()
            },
        )
        .await;
    assert!(
        matches!(listed, Err(StorageError::Expired { .. })),
        "{listed:?}"
    );
}

/// Two replicas' compactors taking turns each interval: exactly one compacts
/// per round, and when it stops the other takes over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_compactors_compact_once_per_interval() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::single().await;
    let store = store_on(&etcd, "/registry").await;
    let mut first = Compactor::new(store.clone());
    let mut second = Compactor::new(store.clone());
    let mut compacted = Vec::new();
    for round in 0..4 {
        store
            .create(&format!("/registry/r/{round}"), b("v"))
            .await
            .unwrap();
        let outcomes = [first.round().await.unwrap(), second.round().await.unwrap()];
        let won: Vec<_> = outcomes
            .iter()
            .filter(|o| **o != CompactionRound::Lost)
            .collect();
        assert_eq!(won.len(), 1, "round {round}: {outcomes:?}");
        if let CompactionRound::Won {
            compacted: Some(revision),
        } = won[0]
        {
            compacted.push(*revision);
        }
    }
    assert_eq!(compacted.len(), 3, "every round after the first compacts");
    assert!(compacted.windows(2).all(|w| w[0] < w[1]), "{compacted:?}");
    assert_eq!(store.compacted_revision().await.unwrap(), compacted[2]);

    // The first replica stops: the second wins the next round but one.
    let mut takeover = None;
    for _ in 0..2 {
        if let CompactionRound::Won { compacted } = second.round().await.unwrap() {
            takeover = compacted;
        }
    }
    assert!(takeover.is_some_and(|r| r > compacted[2]), "{takeover:?}");
}

/// The same with two real compactor tasks on a short interval: the record's
/// version (one per successful claim) grows about once per interval, not twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_compactor_tasks_share_the_work() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::single().await;
    let store = store_on(&etcd, "/registry").await;
    let interval = Duration::from_millis(400);
    let start = Instant::now();
    let tasks = [
        tokio::spawn(run_compactor(store.clone(), interval)),
        tokio::spawn(run_compactor(store.clone(), interval)),
    ];
    for i in 0..20 {
        store
            .create(&format!("/registry/t/{i}"), b("v"))
            .await
            .unwrap();
        tokio::time::sleep(interval / 5).await;
    }
    for task in &tasks {
        task.abort();
    }
    let intervals = start.elapsed().as_millis() / interval.as_millis();
    let mut raw = etcd.raw_client().await;
    let record = raw
        .get(COMPACT_REV_KEY, Some(GetOptions::new()))
        .await
        .unwrap();
    let claims = record.kvs()[0].version() as u128;
    assert!(claims >= 2, "compactors made no progress");
    assert!(
        claims <= intervals + 1,
        "{claims} claims in {intervals} intervals"
    );
    assert!(store.compacted_revision().await.unwrap() > 0);
}
