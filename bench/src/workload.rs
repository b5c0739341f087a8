//! Runs one operation repeatedly on C concurrent clients, each with its own
//! connection, for a time or for a number of operations, and totals what happened.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::{Value, json};

use crate::http::{Client, Target};
use crate::random::Rng;
use crate::stats::{Latencies, round3};

/// One operation of a scenario (a create, a get, a whole paged list...).
pub trait Operation: Send + Sync + 'static {
    /// Runs the operation number `index` (0, 1, 2... across all clients).
    fn run(
        &self,
        client: &mut Client,
        rng: &mut Rng,
        index: u64,
    ) -> impl Future<Output = Result<Done>> + Send;
}

/// What one successful operation did.
pub struct Done {
    /// Its kind, for scenarios mixing several (`get`, `list`, `update`).
    pub kind: &'static str,
    /// Objects it returned (lists), else 0.
    pub items: u64,
}

impl Done {
    /// A single-object operation of `kind`.
    pub fn one(kind: &'static str) -> Self {
        Self { kind, items: 0 }
    }
}

/// When the clients stop.
#[derive(Clone, Copy)]
pub enum Until {
    /// After this long.
    Elapsed(Duration),
    /// After this many operations (indices 0..n), however long it takes.
    Count(u64),
}

/// What all clients did together.
#[derive(Default)]
pub struct Totals {
    /// Successful operations.
    pub ops: u64,
    /// Failed operations.
    pub errors: u64,
    /// Objects returned by list operations.
    pub items: u64,
    /// The first failure, to show why.
    pub first_error: Option<String>,
    /// Latencies per kind of operation.
    pub latencies: BTreeMap<&'static str, Latencies>,
    /// Wall time from start to the last client's end.
    pub elapsed: Duration,
}

impl Totals {
    /// Operations per second.
    pub fn rate(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Every kind's latencies together.
    pub fn all_latencies(&mut self) -> Latencies {
        let mut all = Latencies::default();
        for (_, latencies) in std::mem::take(&mut self.latencies) {
            all.merge(latencies);
        }
        all
    }

    /// The common part of a scenario's JSON: counts, seconds, first error.
    pub fn base_json(&self) -> Value {
        json!({
            "ops": self.ops,
            "errors": self.errors,
            "seconds": round3(self.elapsed.as_secs_f64()),
            "first_error": self.first_error,
        })
    }

    fn add(&mut self, other: Totals) {
        self.ops += other.ops;
        self.errors += other.errors;
        self.items += other.items;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
        for (kind, latencies) in other.latencies {
            self.latencies.entry(kind).or_default().merge(latencies);
        }
    }
}

/// Runs `operation` on `clients` concurrent clients until `until`.
pub async fn run<O: Operation>(
    target: &Arc<Target>,
    clients: usize,
    until: Until,
    operation: Arc<O>,
) -> Totals {
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..clients.max(1) {
        let (target, operation, next) = (target.clone(), operation.clone(), next.clone());
        workers.push(tokio::spawn(async move {
            worker(Client::new(target), &*operation, until, started, &next).await
        }));
    }
    let mut totals = Totals::default();
    for worker in workers {
        match worker.await {
            Ok(done) => totals.add(done),
            Err(e) => {
                totals.errors += 1;
                totals
                    .first_error
                    .get_or_insert_with(|| format!("worker failed: {e}"));
            }
        }
    }
    totals.elapsed = started.elapsed();
    totals
}

/// One client's loop.
async fn worker<O: Operation>(
    mut client: Client,
    operation: &O,
    until: Until,
    started: Instant,
    next: &AtomicU64,
) -> Totals {
    let mut rng = Rng::new();
    let mut totals = Totals::default();
    loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        match until {
            Until::Elapsed(limit) if started.elapsed() >= limit => break,
            Until::Count(n) if index >= n => break,
            _ => {}
        }
        let sent = Instant::now();
        match operation.run(&mut client, &mut rng, index).await {
            Ok(done) => {
                totals.ops += 1;
                totals.items += done.items;
                totals
                    .latencies
                    .entry(done.kind)
                    .or_default()
                    .push(sent.elapsed());
            }
            Err(e) => {
                totals.errors += 1;
                totals.first_error.get_or_insert_with(|| format!("{e:#}"));
                // A server that refuses everything must not turn this into a busy loop.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
    totals
}
