//! Measures custom resources through a real client (kube-rs): the time from
//! a CustomResourceDefinition's create to its `Established` condition and to
//! its first served list, then creates/s and gets/s of a custom resource
//! beside a ConfigMap of the same size (about 1 KiB), at 1 and 32 clients.
//!
//! `cargo run --release --example bench_crd [-- [--etcd] [PATH_TO_KAPI]]`
//! (default binary: `target/release/kapi`; build it first with `cargo build --release`).
//! Prints figures; asserts nothing.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kapi_test_support::Server;
use kapi_test_support::etcd::EtcdCluster;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use kube::{Client, Config};
use serde_json::json;

const PHASE: Duration = Duration::from_secs(3);

/// A value of about 1 KiB, the payload of both kinds.
fn payload() -> String {
    "x".repeat(1000)
}

fn crd() -> serde_json::Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "benches.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "benches", "singular": "bench", "kind": "Bench"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "data": {"type": "object", "additionalProperties": {"type": "string"}}
                }}}
            }]
        }
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut on_etcd = false;
    let mut binary = PathBuf::from("target/release/kapi");
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--etcd" => on_etcd = true,
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
    let etcd = on_etcd.then(|| EtcdCluster::start(1));
    let endpoints = etcd.as_ref().map(EtcdCluster::endpoints);
    let extra: Vec<&str> = match &endpoints {
        Some(endpoints) => vec!["--etcd-servers", endpoints],
        None => Vec::new(),
    };
    println!(
        "backend: {}",
        if on_etcd {
            "etcd (single local member)"
        } else {
            "embedded"
        }
    );
    let server = Server::start_args(&binary, &extra);
    let client = Client::try_from(Config::new(server.url().parse()?))?;

    // Definition to Established, and to the first list of the new kind.
    let crds = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        "customresourcedefinitions",
    );
    let crd_api: Api<DynamicObject> = Api::all_with(client.clone(), &crds);
    let definition: DynamicObject = serde_json::from_value(crd())?;
    let benches = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Bench"),
        "benches",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &benches);
    let started = Instant::now();
    crd_api.create(&PostParams::default(), &definition).await?;
    let established = loop {
        let current = crd_api.get("benches.example.com").await?;
        let conditions = current.data["status"]["conditions"].as_array().cloned();
        let done = conditions
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Established" && c["status"] == "True");
        if done {
            break started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "never established"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    let served = loop {
        if api.list(&Default::default()).await.is_ok() {
            break started.elapsed();
        }
        assert!(started.elapsed() < Duration::from_secs(30), "never served");
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    println!(
        "CRD create to Established: {:.1} ms; to its first list: {:.1} ms",
        established.as_secs_f64() * 1e3,
        served.as_secs_f64() * 1e3
    );

    let configmaps: Api<ConfigMap> = Api::namespaced(client, "default");
    let b0: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Bench",
        "metadata": {"name": "b0"}, "data": {"payload": payload()}
    }))?;
    api.create(&PostParams::default(), &b0).await?;
    let c0: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "c0"}, "data": {"payload": payload()}}),
    )?;
    configmaps.create(&PostParams::default(), &c0).await?;
    for tasks in [1, 32] {
        let created = run(tasks, Target::Custom(api.clone()), Op::Create).await;
        let got = run(tasks, Target::Custom(api.clone()), Op::Get).await;
        let cm_created = run(tasks, Target::ConfigMap(configmaps.clone()), Op::Create).await;
        let cm_got = run(tasks, Target::ConfigMap(configmaps.clone()), Op::Get).await;
        let rate = |n: usize| n as f64 / PHASE.as_secs_f64();
        println!(
            "{tasks:>2} clients: custom resource creates/s {:>7.0}  gets/s {:>7.0} | ConfigMap creates/s {:>7.0}  gets/s {:>7.0}",
            rate(created),
            rate(got),
            rate(cm_created),
            rate(cm_got)
        );
    }
    Ok(())
}

#[derive(Clone)]
enum Target {
    Custom(Api<DynamicObject>),
    ConfigMap(Api<ConfigMap>),
}

#[derive(Clone, Copy)]
enum Op {
    Create,
    Get,
}

/// Names are numbered from one on: `b0` and `c0`, made first, are read.
static NEXT: AtomicUsize = AtomicUsize::new(1);

/// Runs `op` from `tasks` concurrent clients for one phase; the count done.
async fn run(tasks: usize, target: Target, op: Op) -> usize {
    let done = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + PHASE;
    let mut handles = Vec::new();
    for _ in 0..tasks {
        let (target, done) = (target.clone(), done.clone());
        handles.push(tokio::spawn(async move {
            while Instant::now() < deadline {
                let ok = match (&target, op) {
                    (Target::Custom(api), Op::Create) => {
                        let name = format!("b{}", NEXT.fetch_add(1, Ordering::Relaxed));
                        let object: DynamicObject = serde_json::from_value(json!({
                            "apiVersion": "example.com/v1", "kind": "Bench",
                            "metadata": {"name": name}, "data": {"payload": payload()}
                        }))
                        .unwrap_or_else(|_| unreachable!("a valid object"));
                        api.create(&PostParams::default(), &object).await.is_ok()
                    }
                    (Target::Custom(api), Op::Get) => api.get("b0").await.is_ok(),
                    (Target::ConfigMap(api), Op::Create) => {
                        let name = format!("c{}", NEXT.fetch_add(1, Ordering::Relaxed));
                        let object: ConfigMap = serde_json::from_value(json!({
                            "metadata": {"name": name}, "data": {"payload": payload()}
                        }))
                        .unwrap_or_else(|_| unreachable!("a valid object"));
                        api.create(&PostParams::default(), &object).await.is_ok()
                    }
                    (Target::ConfigMap(api), Op::Get) => api.get("c0").await.is_ok(),
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
