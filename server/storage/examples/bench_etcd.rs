//! Throughput of the etcd backend against a single local etcd that this program
//! starts itself (`/usr/bin/etcd`, free loopback ports, a temporary data
//! directory, killed at the end): creates/s (each a transaction etcd commits to
//! its WAL before answering) and gets/s (linearizable reads), at 1 and 32
//! concurrent tasks. Compare with `bench_embedded`.
//!
//! `cargo run --release -p kapi-storage --example bench_etcd`
//! (`BENCH_SECONDS` sets the length of each phase, default 3).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/etcd_support/mod.rs"]
mod etcd_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use etcd_support::{EtcdCluster, etcd_available};
use kapi_storage::Storage;
use kapi_storage::etcd::{EtcdOptions, EtcdStore};

/// A value the size of a small ConfigMap (as in `bench_embedded`).
const VALUE: &[u8] = &[b'x'; 1024];

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if !etcd_available() {
        return Ok(());
    }
    let seconds = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let phase = Duration::from_secs(seconds);
    let etcd = EtcdCluster::single().await;
    let store = EtcdStore::connect(EtcdOptions::new(etcd.endpoints())).await?;
    println!(
        "single local etcd at {}, {seconds}s per phase",
        etcd.endpoint(0)
    );
    for tasks in [1, 32] {
        let created = run(&store, tasks, phase, Phase::Create).await?;
        println!("creates/s with {tasks:>2} tasks: {created:>9.0}");
    }
    for tasks in [1, 32] {
        let got = run(&store, tasks, phase, Phase::Get).await?;
        println!("gets/s    with {tasks:>2} tasks: {got:>9.0}");
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Phase {
    Create,
    Get,
}

/// Runs `tasks` loops of `phase` for `length`; answers operations per second.
async fn run(
    store: &EtcdStore,
    tasks: usize,
    length: Duration,
    phase: Phase,
) -> Result<f64, Box<dyn std::error::Error>> {
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let workers: Vec<_> = (0..tasks)
        .map(|task| {
            let (store, done) = (store.clone(), done.clone());
            tokio::spawn(
                async move { worker(store, task, tasks, start + length, phase, done).await },
            )
        })
        .collect();
    for worker in workers {
        worker.await??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64())
}

async fn worker(
    store: EtcdStore,
    task: usize,
    tasks: usize,
    until: Instant,
    phase: Phase,
    done: Arc<AtomicU64>,
) -> Result<(), kapi_storage::StorageError> {
    let mut i = 0u64;
    while Instant::now() < until {
        match phase {
            Phase::Create => {
                let key = format!("/registry/bench/{tasks}/{task}/{i:010}");
                store.create(&key, Bytes::from_static(VALUE)).await?;
            }
            Phase::Get => {
                // Keys the single-task create phase wrote.
                let key = format!("/registry/bench/1/0/{:010}", i % 200);
                store.get(&key).await?;
            }
        }
        i += 1;
        done.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}
