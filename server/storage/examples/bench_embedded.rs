//! Throughput of the embedded store: creates/s (each one fsync'd before it is
//! acknowledged, so group commit is what lets concurrent writers scale) and
//! gets/s, at 1 and 32 concurrent tasks.
//!
//! `cargo run --release -p kapi-storage --example bench_embedded`
//! (`BENCH_SECONDS` sets the length of each phase, default 3).

mod bench;

use std::sync::Arc;

use kapi_storage::embedded::EmbeddedStore;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let phase = bench::phase_length();
    let seconds = phase.as_secs();
    let dir = tempfile::tempdir()?;
    let store = EmbeddedStore::open(dir.path())?;
    println!(
        "embedded store in {}, {seconds}s per phase",
        dir.path().display()
    );
    bench::report(Arc::new(store), "", phase).await?;
    Ok(())
}
