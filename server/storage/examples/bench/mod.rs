//! The measuring loop both storage benchmarks share: `tasks` concurrent loops of
//! creates or gets for a fixed time, on any [`Storage`] backend.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kapi_storage::Storage;

/// A value the size of a small ConfigMap.
const VALUE: &[u8] = &[b'x'; 1024];

/// The length of each phase: `BENCH_SECONDS`, default 3.
pub fn phase_length() -> Duration {
    let seconds = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    Duration::from_secs(seconds)
}

/// Prints creates/s and then gets/s at 1 and 32 tasks, keys under `prefix`.
pub async fn report(
    store: Arc<dyn Storage>,
    prefix: &'static str,
    length: Duration,
) -> Result<(), Box<dyn std::error::Error>> {
    for tasks in [1, 32] {
        let created = run(&store, prefix, tasks, length, Phase::Create).await?;
        println!("creates/s with {tasks:>2} tasks: {created:>9.0}");
    }
    for tasks in [1, 32] {
        let got = run(&store, prefix, tasks, length, Phase::Get).await?;
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
    store: &Arc<dyn Storage>,
    prefix: &'static str,
    tasks: usize,
    length: Duration,
    phase: Phase,
) -> Result<f64, Box<dyn std::error::Error>> {
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let workers: Vec<_> = (0..tasks)
        .map(|task| {
            let (store, done) = (store.clone(), done.clone());
            tokio::spawn(async move {
                worker(store, prefix, task, tasks, start + length, phase, done).await
            })
        })
        .collect();
    for worker in workers {
        worker.await??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64())
}

async fn worker(
    store: Arc<dyn Storage>,
    prefix: &str,
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
                let key = format!("{prefix}/bench/{tasks}/{task}/{i:010}");
                store.create(&key, Bytes::from_static(VALUE)).await?;
            }
            Phase::Get => {
                // Keys the single-task create phase wrote.
                let key = format!("{prefix}/bench/1/0/{:010}", i % 200);
                store.get(&key).await?;
            }
        }
        i += 1;
        done.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}
