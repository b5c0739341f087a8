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

mod bench;

use std::sync::Arc;

use etcd_support::{EtcdCluster, etcd_available};
use kapi_storage::etcd::{EtcdOptions, EtcdStore};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if !etcd_available() {
        return Ok(());
    }
    let phase = bench::phase_length();
    let seconds = phase.as_secs();
    let etcd = EtcdCluster::single().await;
    let store = EtcdStore::connect(EtcdOptions::new(etcd.endpoints())).await?;
    println!(
        "single local etcd at {}, {seconds}s per phase",
        etcd.endpoint(0)
    );
    bench::report(Arc::new(store), "/registry", phase).await?;
    Ok(())
}
