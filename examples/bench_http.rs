//! Measures the real server through a real client: time from start to `/readyz`,
//! then creates/s, gets/s and updates/s (merge patches that change a value) of
//! ConfigMaps at 1 and 32 concurrent clients (kube-rs).
//!
//! `cargo run --release --example bench_http [-- [--etcd] [--storage-media-type TYPE] [--seconds N] [PATH_TO_KAPI]]`
//! (default binary: `target/release/kapi`; build it first with `cargo build --release`).
//! With `--etcd` the server runs on a single local etcd the program starts itself
//! (`/usr/bin/etcd`), otherwise on the embedded store; `--storage-media-type` is
//! passed to the server (the format objects are stored in); each phase runs
//! `--seconds` (3 by default; longer phases even out a shared machine's noise).
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

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut on_etcd = false;
    let mut media_type = None;
    let mut phase = Duration::from_secs(3);
    let mut binary = PathBuf::from("target/release/kapi");
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--etcd" => on_etcd = true,
            "--storage-media-type" => media_type = args.next(),
            "--seconds" => {
                let seconds = args.next().and_then(|s| s.parse().ok());
                phase = Duration::from_secs(seconds.ok_or("--seconds takes a whole number")?);
            }
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
    // The server's own CPU time per request, apart from the client's (both
    // share the machine).
    let pid = server.pid();
    for tasks in [1, 32] {
        for (op, name) in [
            (Op::Create, "creates"),
            (Op::Get, "gets   "),
            (Op::Update, "updates"),
        ] {
            let before = cpu_ticks(pid);
            let done = run(&api, tasks, op, phase).await;
            let spent = cpu_ticks(pid).saturating_sub(before);
            // Linux counts process time in ticks of 10 ms.
            let per_request = spent as f64 * 10_000.0 / done.max(1) as f64;
            println!(
                "{name}/s with {tasks:>2} clients: {:>8.0}   (server CPU {per_request:>5.0} us/request)",
                done as f64 / phase.as_secs_f64()
            );
        }
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
async fn run(api: &Api<ConfigMap>, tasks: usize, op: Op, phase: Duration) -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let done = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + phase;
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

/// User plus system CPU time of process `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which may hold spaces) in parens.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after ')'.
    field(11) + field(12)
}

/// A cheap pseudo-random index below `n` (quality does not matter here).
fn fastrand(n: usize) -> usize {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    (h.finish() as usize) % n
}
