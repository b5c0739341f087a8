//! The embedded backend: the conformance suite, then what only a store in a local
//! file can promise (reopening, crash safety, its watch buffer).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod conformance;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use conformance::b;
use futures::StreamExt;
use kapi_storage::embedded::{EmbeddedOptions, EmbeddedStore};
use kapi_storage::{ListOptions, Storage, StorageError};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    conformance::run_all(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopen_keeps_data_and_revision() {
    let dir = tempfile::tempdir().unwrap();
    let (kept, before_update, revision, compacted) = {
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let a = store.create("/r/a", b("a1")).await.unwrap();
        store.create("/r/gone", b("g")).await.unwrap();
        store.delete("/r/gone", None).await.unwrap();
        let before_update = store.current_revision().await.unwrap();
        let kept = store.update("/r/a", b("a2"), a.mod_revision).await.unwrap();
        store.compact(a.mod_revision).await.unwrap();
        let revision = store.current_revision().await.unwrap();
        (kept, before_update, revision, a.mod_revision)
    };
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.current_revision().await.unwrap(), revision);
    assert_eq!(store.compacted_revision().await.unwrap(), compacted);
    assert_eq!(store.get("/r/a").await.unwrap(), Some(kept.clone()));
    assert_eq!(store.get("/r/gone").await.unwrap(), None);
    // History survives too.
    let old = ListOptions {
        revision: before_update,
        ..ListOptions::default()
    };
    let listed = store.list("/r/", old).await.unwrap();
    assert_eq!(listed.items[0].value, b("a1"));
    // And the revision keeps growing from where it was.
    let next = store.create("/r/b", b("b")).await.unwrap();
    assert_eq!(next.mod_revision, revision + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_are_all_durable() {
    let dir = tempfile::tempdir().unwrap();
    let mut revisions = {
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let tasks: Vec<_> = (0..50)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move { store.create(&format!("/c/{i:02}"), b("v")).await })
            })
            .collect();
        let mut revisions = Vec::new();
        for task in tasks {
            revisions.push(task.await.unwrap().unwrap().mod_revision);
        }
        revisions
    };
    revisions.sort_unstable();
    revisions.dedup();
    assert_eq!(revisions.len(), 50, "every create got its own revision");
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let listed = store.list("/c/", ListOptions::default()).await.unwrap();
    assert_eq!(listed.items.len(), 50);
    assert_eq!(store.current_revision().await.unwrap(), 50);
}

#[tokio::test]
async fn second_open_of_the_same_directory_is_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let _store = EmbeddedStore::open(dir.path()).unwrap();
    let err = EmbeddedStore::open(dir.path()).err().unwrap();
    assert!(matches!(err, StorageError::Unavailable(_)), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lagging_watcher_gets_expired_and_its_stream_ends() {
    let dir = tempfile::tempdir().unwrap();
    let options = EmbeddedOptions {
        watch_buffer: 2,
        ..EmbeddedOptions::default()
    };
    let store = EmbeddedStore::open_with(dir.path(), options).unwrap();
    let mut w = store.watch("/l/", 0, None).await.unwrap();
    for i in 0..10 {
        store.create(&format!("/l/{i}"), b("v")).await.unwrap();
    }
    let item = w.next().await.unwrap();
    assert!(
        matches!(item, Err(StorageError::Expired { .. })),
        "{item:?}"
    );
    assert!(w.next().await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_stream_ends_when_the_store_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let mut w = store.watch("/d/", 0, None).await.unwrap();
    drop(store);
    let end = tokio::time::timeout(Duration::from_secs(10), w.next()).await;
    assert!(matches!(end, Ok(None)), "{end:?}");
}

/// Set for the child process of [`acknowledged_writes_survive_kill_9`].
const CRASH_CHILD_DIR: &str = "KAPI_STORAGE_CRASH_CHILD_DIR";

/// The child half of the crash test: writes from 8 tasks forever and prints each
/// acknowledged key. Does nothing in a normal test run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_child_writes_until_killed() {
    let Ok(dir) = std::env::var(CRASH_CHILD_DIR) else {
        return;
    };
    let store = EmbeddedStore::open(Path::new(&dir)).unwrap();
    let writers = (0..8).map(|task| {
        let store = store.clone();
        tokio::spawn(async move {
            for i in 0.. {
                let key = format!("/crash/{task}/{i:08}");
                store.create(&key, b("durable")).await.unwrap();
                println!("acked {key}");
            }
        })
    });
    futures::future::join_all(writers).await;
}

/// Acknowledged writes survive `kill -9` of the process: the parent runs the
/// test binary again as a writer, kills it mid-flight, and checks every key the
/// child had acknowledged.
#[test]
fn acknowledged_writes_survive_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["crash_child_writes_until_killed", "--exact", "--nocapture"])
        .env(CRASH_CHILD_DIR, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut lines = stdout.lines();
    let mut acked = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while acked.len() < 500 && Instant::now() < deadline {
        let Some(line) = lines.next() else { break };
        if let Some(key) = line.unwrap().strip_prefix("acked ") {
            acked.push(key.to_owned());
        }
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    // Lines already printed were acknowledged before the kill.
    for line in lines.map_while(Result::ok) {
        if let Some(key) = line.strip_prefix("acked ") {
            acked.push(key.to_owned());
        }
    }
    assert!(
        acked.len() >= 100,
        "child acknowledged only {}",
        acked.len()
    );

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = EmbeddedStore::open(dir.path()).unwrap();
        for key in &acked {
            assert!(store.get(key).await.unwrap().is_some(), "{key} was lost");
        }
    });
}
