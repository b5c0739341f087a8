//! Measures the real server through a real client: time from start to `/readyz`,
//! then creates/s, gets/s and updates/s (merge patches that change a value) of
//! ConfigMaps at 1 and 32 concurrent clients (kube-rs).
//!
//! `cargo run --release --example bench_http [-- [--etcd] [--storage-media-type TYPE] [PATH_TO_KAPI]]`
//! (default binary: `target/release/kapi`; build it first with `cargo build --release`).
//! With `--etcd` the server runs on a single local etcd the program starts itself
//! (`/usr/bin/etcd`), otherwise on the embedded store; `--storage-media-type` is
//! passed to the server (the format objects are stored in).
//! Prints figures; asserts nothing.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kapi_test_support::Server;
use kapi_test_support::etcd::EtcdCluster;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Client, Config};

const PHASE: Duration = Duration::from_secs(3);

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut on_etcd = false;
    let mut media_type = None;
    let mut binary = PathBuf::from("target/release/kapi");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--etcd" => on_etcd = true,
            "--storage-media-type" => media_type = args.next(),
            _ => binary = PathBuf::from(arg),
        }
    }
    if !binary.exists() {
        return Err(format!(
            "{} not found: run `cargo build --release` first",
            binary.display()
        )
        .into());
    }
    // Server::start returns once /readyz answers 200.
    let etcd = on_etcd.then(|| EtcdCluster::start(1));
    let endpoints = etcd.as_ref().map(EtcdCluster::endpoints);
    let mut extra: Vec<&str> = match &endpoints {
        Some(endpoints) => vec!["--etcd-servers", endpoints],
        None => Vec::new(),
    };
    if let Some(media_type) = &media_type {
        extra.extend(["--storage-media-type", media_type]);
        println!("storage media type: {media_type}");
    }
    println!(
        "backend: {}",
        if on_etcd {
            "etcd (single local member)"
        } else {
            "embedded"
        }
    );
    let started = Instant::now();
    let server = Server::start_args(&binary, &extra);
    let ready = started.elapsed();
    println!(
        "start to ready (process spawn, store open, /readyz 200): {:.1} ms",
        ready.as_secs_f64() * 1e3
    );

    let client = Client::try_from(Config::new(server.url().parse()?))?;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    for tasks in [1, 32] {
        let created = run(&api, tasks, Op::Create).await;
        println!(
            "creates/s with {tasks:>2} clients: {:>8.0}",
            created as f64 / PHASE.as_secs_f64()
        );
        let got = run(&api, tasks, Op::Get).await;
        println!(
            "gets/s    with {tasks:>2} clients: {:>8.0}",
            got as f64 / PHASE.as_secs_f64()
        );
        let updated = run(&api, tasks, Op::Update).await;
        println!(
            "updates/s with {tasks:>2} clients: {:>8.0}",
            updated as f64 / PHASE.as_secs_f64()
        );
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Op {
    Create,
    Get,
    Update,
}

/// Runs `tasks` clients for one phase and returns how many requests succeeded.
async fn run(api: &Api<ConfigMap>, tasks: usize, op: Op) -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let done = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + PHASE;
    let mut handles = Vec::new();
    for _ in 0..tasks {
        let (api, done) = (api.clone(), done.clone());
        handles.push(tokio::spawn(async move {
            while Instant::now() < deadline {
                let ok = match op {
                    Op::Create => {
                        let name = format!("bench-{}", NEXT.fetch_add(1, Ordering::Relaxed));
                        let cm = ConfigMap {
                            metadata: ObjectMeta {
                                name: Some(name),
                                ..ObjectMeta::default()
                            },
                            data: Some([("payload".to_owned(), "x".repeat(512))].into()),
                            ..ConfigMap::default()
                        };
                        api.create(&PostParams::default(), &cm).await.is_ok()
                    }
                    Op::Get => {
                        let n = NEXT.load(Ordering::Relaxed).max(1);
                        api.get(&format!("bench-{}", fastrand(n))).await.is_ok()
                    }
                    Op::Update => {
                        let n = NEXT.load(Ordering::Relaxed).max(1);
                        let patch =
                            serde_json::json!({"data": {"counter": fastrand(1 << 30).to_string()}});
                        api.patch(
                            &format!("bench-{}", fastrand(n)),
                            &PatchParams::default(),
                            &Patch::Merge(&patch),
                        )
                        .await
                        .is_ok()
                    }
                };
                if ok {
                    done.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for handle in handles {
        let _ = handle.await;
    }
    done.load(Ordering::Relaxed)
}

/// A cheap pseudo-random index below `n` (quality does not matter here).
fn fastrand(n: usize) -> usize {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    (h.finish() as usize) % n
}
