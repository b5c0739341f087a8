//! Failure behaviour on a 3-member etcd cluster on loopback: a member (the
//! leader) killed during a burst of creates loses no acknowledged write; with
//! quorum lost calls fail with Unavailable in bounded time; once the members
//! are back the same store serves again by itself; and a watch opened before
//! all this either delivers every event in order or ends with an error —
//! never a silent gap.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod etcd_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use etcd_support::{EtcdCluster, etcd_available};
use futures::StreamExt;
use kapi_storage::etcd::{EtcdOptions, EtcdStore};
use kapi_storage::{ListOptions, ListResult, Storage, StorageError, WatchEvent, WatchStream};
use tokio::sync::mpsc;

const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// Generous bounds for failure behaviour (this is not a speed test): only a
/// failing run waits this long.
const MARGIN: Duration = Duration::from_secs(10);
const RECOVERY: Duration = Duration::from_secs(60);
const PREFIX: &str = "/registry/burst/";
const TASKS: usize = 16;
const PER_TASK: usize = 19;
/// The leader is killed once this many creates were attempted.
const KILL_AFTER: usize = 120;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn member_loss_quorum_loss_and_recovery() {
    if !etcd_available() {
        return;
    }
    let mut etcd = EtcdCluster::start(3, &[]).await;
    let options = EtcdOptions {
        request_timeout: REQUEST_TIMEOUT,
        ..EtcdOptions::new(etcd.endpoints())
    };
    let store = EtcdStore::connect(options).await.unwrap();
    let r0 = store.current_revision().await.unwrap();
    let mut watched = forward(store.watch(PREFIX, r0, None).await.unwrap());

    let leader = etcd.leader().await.expect("the cluster has a leader");
    let acked = burst_killing_member(&store, &mut etcd, leader).await;
    assert!(
        acked.len() >= KILL_AFTER / 2,
        "only {} creates acked",
        acked.len()
    );
    assert_all_present(&store, &acked).await;

    let second = (0..3).find(|i| *i != leader).unwrap();
    etcd.kill(second);
    assert_unavailable_in_bounded_time(&store).await;

    etcd.spawn(leader);
    etcd.spawn(second);
    let last = write_after_recovery(&store).await;
    assert_all_present(&store, &acked).await;
    assert_watch_has_no_gap(&store, &mut watched, last).await;
}

/// Reads a watch into a channel as it comes, so the test can look later
/// without etcd's stream stalling meanwhile.
fn forward(mut watch: WatchStream) -> mpsc::UnboundedReceiver<Result<WatchEvent, StorageError>> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(item) = watch.next().await {
            if tx.send(item).is_err() {
                return;
            }
        }
    });
    rx
}

/// Creates `TASKS * PER_TASK` keys from `TASKS` tasks, killing `victim` with
/// SIGKILL midway; answers the keys whose create returned Ok.
async fn burst_killing_member(
    store: &EtcdStore,
    etcd: &mut EtcdCluster,
    victim: usize,
) -> Vec<String> {
    let attempted = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let (store, attempted) = (store.clone(), attempted.clone());
            tokio::spawn(async move {
                let mut acked = Vec::new();
                let mut failed = Vec::new();
                for i in 0..PER_TASK {
                    let key = format!("{PREFIX}{task:02}-{i:02}");
                    match store.create(&key, Bytes::from_static(b"v")).await {
                        Ok(kv) => acked.push(kv.key),
                        Err(StorageError::Unavailable(e)) => failed.push(e),
                        Err(other) => panic!("{key}: {other:?}"),
                    }
                    attempted.fetch_add(1, Ordering::Relaxed);
                }
                (acked, failed)
            })
        })
        .collect();
    let deadline = Instant::now() + RECOVERY;
    while attempted.load(Ordering::Relaxed) < KILL_AFTER {
        assert!(Instant::now() < deadline, "burst stalled before the kill");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    etcd.kill(victim);
    let mut acked = Vec::new();
    let mut failed = Vec::new();
    for task in tasks {
        let (ok, err) = task.await.unwrap();
        acked.extend(ok);
        failed.extend(err);
    }
    eprintln!(
        "burst: {} acked, {} unavailable: {:?}",
        acked.len(),
        failed.len(),
        failed.iter().take(3).collect::<Vec<_>>()
    );
    acked
}

/// Lists the prefix, retrying (bounded) while the cluster is still settling:
/// the callers check durability and order, not availability.
async fn list_all(store: &EtcdStore) -> ListResult {
    let started = Instant::now();
    loop {
        match store.list(PREFIX, ListOptions::default()).await {
            Ok(listed) => return listed,
            Err(err) => assert!(started.elapsed() < RECOVERY, "cannot list: {err:?}"),
        }
    }
}

/// Every acknowledged key is present.
async fn assert_all_present(store: &EtcdStore, keys: &[String]) {
    let listed = list_all(store).await;
    for key in keys {
        assert!(
            listed.items.iter().any(|kv| &kv.key == key),
            "acknowledged create of {key} was lost"
        );
    }
}

/// Each kind of call fails with Unavailable, each within the request timeout
/// plus a margin.
async fn assert_unavailable_in_bounded_time(store: &EtcdStore) {
    let bound = REQUEST_TIMEOUT + MARGIN;
    let calls: Vec<(
        &str,
        futures::future::BoxFuture<'_, Result<(), StorageError>>,
    )> = vec![
        (
            "create",
            Box::pin(async {
                store
                    .create(&format!("{PREFIX}lost"), Bytes::new())
                    .await
                    .map(drop)
            }),
        ),
        (
            "get",
            Box::pin(async { store.get(&format!("{PREFIX}00-00")).await.map(drop) }),
        ),
        (
            "list",
            Box::pin(async { store.list(PREFIX, ListOptions::default()).await.map(drop) }),
        ),
        (
            "current_revision",
            Box::pin(async { store.current_revision().await.map(drop) }),
        ),
        ("ready", Box::pin(store.ready())),
        (
            "watch",
            Box::pin(async { store.watch(PREFIX, 0, None).await.map(drop) }),
        ),
    ];
    for (name, call) in calls {
        let started = Instant::now();
        let result = tokio::time::timeout(bound, call).await;
        let elapsed = started.elapsed();
        eprintln!("without quorum, {name} answered in {elapsed:?}: {result:?}");
        match result {
            Ok(Err(StorageError::Unavailable(_))) => {}
            other => panic!("{name} without quorum: expected Unavailable, got {other:?}"),
        }
    }
}

/// Waits (bounded) until the same store serves a write again, and answers its
/// revision. Restarted members may trigger another election (etcd 3.4 has no
/// pre-vote by default), whose in-flight writes fail as Unavailable: the test
/// retries those, and takes AlreadyExists as an earlier attempt that landed.
async fn write_after_recovery(store: &EtcdStore) -> u64 {
    let started = Instant::now();
    let key = format!("{PREFIX}after");
    let revision = loop {
        match store.create(&key, Bytes::from_static(b"v")).await {
            Ok(kv) => break kv.mod_revision,
            Err(StorageError::AlreadyExists(_)) => {
                break store.get(&key).await.unwrap().unwrap().mod_revision;
            }
            Err(StorageError::Unavailable(err)) => {
                assert!(started.elapsed() < RECOVERY, "store did not recover: {err}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(other) => panic!("after recovery: {other:?}"),
        }
    };
    // A member just restarted may still be catching up when the first write
    // succeeds through another: a read it is asked meanwhile can time out.
    while let Err(err) = store.ready().await {
        assert!(started.elapsed() < RECOVERY, "store did not recover: {err}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    eprintln!("store serving again after {:?}", started.elapsed());
    revision
}

/// The watch delivered, in order, the creates under the prefix without a gap
/// up to `last`, or a gap-free beginning of them followed by an error.
async fn assert_watch_has_no_gap(
    store: &EtcdStore,
    watched: &mut mpsc::UnboundedReceiver<Result<WatchEvent, StorageError>>,
    last: u64,
) {
    let listed = list_all(store).await;
    let mut written: Vec<u64> = listed.items.iter().map(|kv| kv.mod_revision).collect();
    written.sort_unstable();
    let mut received = Vec::new();
    let ended = loop {
        let item = tokio::time::timeout(RECOVERY, watched.recv()).await;
        match item.expect("watch neither delivered every event nor ended with an error") {
            Some(Ok(WatchEvent::Progress { .. })) => {}
            Some(Ok(WatchEvent::Added(kv))) => {
                received.push(kv.mod_revision);
                if kv.mod_revision == last {
                    break None;
                }
            }
            Some(Ok(other)) => panic!("only creates were made: {other:?}"),
            Some(Err(err)) => break Some(err),
            None => panic!("watch ended without an error item"),
        }
    };
    eprintln!(
        "watch: {} of {} events, then {ended:?}",
        received.len(),
        written.len()
    );
    assert_eq!(received, written[..received.len()], "gap or reorder");
    assert!(ended.is_some() || received.len() == written.len());
}
