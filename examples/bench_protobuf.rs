//! JSON against protobuf, the two encodings Kubernetes clients speak:
//!
//! 1. the codecs alone: ns per encode and decode and encoded bytes of a realistic
//!    Pod and Deployment (as kube-apiserver 1.32 returned them, from
//!    `api-types/tests/fixtures/protobuf/`), through the same generated code the
//!    server uses;
//! 2. the storage codec (`--storage-media-type`): ns to turn the registry's object
//!    into stored bytes and back, per media type, for the same Pod and Deployment;
//! 3. through the server: ConfigMap creates/s and gets/s with protobuf bodies
//!    against JSON bodies, at 1 and 32 concurrent clients (raw requests on a kube-rs
//!    client's connection pool).
//!
//! `cargo run --release --example bench_protobuf [-- PATH_TO_KAPI]` (default
//! `target/release/kapi`; build it first with `cargo build --release`).
//! Prints figures; asserts nothing.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kapi_api_types::apps::v1::Deployment;
use kapi_api_types::core::v1::ConfigMap;
use kapi_api_types::core::v1::pod::Pod;
use kapi_runtime::meta::ObjectMeta;
use kapi_runtime::proto::{Message, envelope};
use kapi_runtime::scheme::Scheme;
use kapi_server::registry::Object;
use kapi_server::stored::{StorageMediaType, decode_stored};
use kapi_storage::KeyValue;
use kapi_test_support::Server;
use kube::client::Body;
use kube::{Client, Config};

const PHASE: Duration = Duration::from_secs(3);
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const JSON: &str = "application/json";

fn fixture<T: Message>(name: &str) -> T {
    let path = format!(
        "{}/api-types/tests/fixtures/protobuf/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let unknown = envelope::decode(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    T::decode(unknown.raw).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Nanoseconds per call of `f`, over about half a second.
fn ns_per_op(mut f: impl FnMut()) -> f64 {
    for _ in 0..1000 {
        f();
    }
    let mut n = 0u64;
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(500) {
        for _ in 0..100 {
            f();
        }
        n += 100;
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

fn codecs<T>(name: &str, object: &T)
where
    T: Message + kapi_runtime::Resource,
{
    let json = serde_json::to_vec(object).expect("json");
    let proto = object.encode_to_vec();
    let json_encode = ns_per_op(|| {
        black_box(serde_json::to_vec(black_box(object)).ok());
    });
    let json_decode = ns_per_op(|| {
        black_box(serde_json::from_slice::<T>(black_box(&json)).ok());
    });
    let proto_encode = ns_per_op(|| {
        black_box(black_box(object).encode_to_vec());
    });
    let proto_decode = ns_per_op(|| {
        black_box(T::decode(black_box(&proto)).ok());
    });
    println!(
        "| {name} | JSON | {} | {json_encode:.0} | {json_decode:.0} |",
        json.len()
    );
    println!(
        "| {name} | protobuf | {} | {proto_encode:.0} | {proto_decode:.0} |",
        proto.len()
    );
}

/// The registry's storage codec for each `--storage-media-type`.
fn storage<T>(name: &str, object: &T)
where
    T: Message + kapi_runtime::Resource,
{
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let info = T::INFO;
    let entry = scheme
        .get(info.group, info.version, info.plural)
        .expect("registered kind")
        .clone();
    let mut object = Object::new(Box::new(object.clone()));
    for media_type in [
        StorageMediaType::Json,
        StorageMediaType::Yaml,
        StorageMediaType::Protobuf,
    ] {
        let bytes = media_type.encode(&entry, &mut object).expect("encode");
        let kv = KeyValue {
            key: "/registry/bench".into(),
            value: bytes.clone(),
            create_revision: 1,
            mod_revision: 1,
        };
        let encode = ns_per_op(|| {
            black_box(media_type.encode(&entry, black_box(&mut object)).ok());
        });
        let decode = ns_per_op(|| {
            black_box(decode_stored(&entry, black_box(&kv)).ok());
        });
        println!(
            "| {name} | {media_type} | {} | {encode:.0} | {decode:.0} |",
            bytes.len()
        );
    }
}

fn configmap(i: usize) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("cm-{i}")),
            labels: Some([("app".to_owned(), "bench".to_owned())].into()),
            ..ObjectMeta::default()
        },
        data: Some([("payload".to_owned(), "x".repeat(512))].into()),
        ..ConfigMap::default()
    }
}

fn body(media: &str, cm: &ConfigMap) -> Vec<u8> {
    if media == PROTOBUF {
        envelope::encode("v1", "ConfigMap", &cm.encode_to_vec())
    } else {
        let mut value = serde_json::to_value(cm).expect("json");
        value["apiVersion"] = "v1".into();
        value["kind"] = "ConfigMap".into();
        serde_json::to_vec(&value).expect("json")
    }
}

/// Operations per second of `clients` tasks doing `op(client, sequence number)`.
async fn rate<F, Fut>(client: &Client, clients: usize, op: F) -> f64
where
    F: Fn(Client, usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let op = Arc::new(op);
    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (op, next, done, client) = (op.clone(), next.clone(), done.clone(), client.clone());
            tokio::spawn(async move {
                while start.elapsed() < PHASE {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if op(client.clone(), i).await {
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        let _ = t.await;
    }
    done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64()
}

async fn send(client: &Client, method: &str, uri: &str, media: &str, body: Vec<u8>) -> bool {
    let request = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", media)
        .header("accept", media)
        .body(Body::from(body));
    let Ok(request) = request else { return false };
    match client.send(request).await {
        Ok(response) => {
            let ok = response.status().is_success();
            ok && response.into_body().collect_bytes().await.is_ok()
        }
        Err(_) => false,
    }
}

async fn through_server(binary: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::start(binary);
    let config = Config::new(server.url().parse()?);
    let client = Client::try_from(config)?;
    println!();
    println!("| body | clients | creates/s | gets/s |");
    println!("|---|---|---|---|");
    for (label, media) in [("JSON", JSON), ("protobuf", PROTOBUF)] {
        for clients in [1, 32] {
            let ns = format!("bench-{}-{clients}", label.to_ascii_lowercase());
            let namespace = format!(
                "{{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{{\"name\":\"{ns}\"}}}}"
            );
            send(
                &client,
                "POST",
                "/api/v1/namespaces",
                JSON,
                namespace.into_bytes(),
            )
            .await;
            let collection = format!("/api/v1/namespaces/{ns}/configmaps");
            let uri = collection.clone();
            let creates = rate(&client, clients, move |c, i| {
                let uri = uri.clone();
                async move { send(&c, "POST", &uri, media, body(media, &configmap(i))).await }
            })
            .await;
            let created = (creates * PHASE.as_secs_f64()) as usize;
            let uri = collection.clone();
            let gets = rate(&client, clients, move |c, i| {
                let uri = format!("{uri}/cm-{}", i % created.max(1));
                async move { send(&c, "GET", &uri, media, Vec::new()).await }
            })
            .await;
            println!("| {label} | {clients} | {creates:.0} | {gets:.0} |");
        }
    }
    watch_latency(&client).await?;
    drop(server);
    Ok(())
}

/// Create-to-event latency of a watch, after the load above: a few milliseconds
/// with TCP_NODELAY; without it a small watch frame waits for the client's
/// delayed ACK and p99 jumps to about 40 ms.
async fn watch_latency(client: &Client) -> Result<(), Box<dyn std::error::Error>> {
    use futures::{StreamExt, TryStreamExt};
    use k8s_openapi::api::core::v1::ConfigMap as KubeConfigMap;
    use kube::api::{Api, PostParams, WatchEvent, WatchParams};
    let api: Api<KubeConfigMap> = Api::namespaced(client.clone(), "default");
    let mut events = api.watch(&WatchParams::default(), "0").await?.boxed();
    let mut latencies = Vec::new();
    for i in 0..200 {
        let cm = KubeConfigMap {
            metadata: kube::api::ObjectMeta {
                name: Some(format!("latency-{i}")),
                ..Default::default()
            },
            ..Default::default()
        };
        let start = Instant::now();
        api.create(&PostParams::default(), &cm).await?;
        while let Some(event) = events.try_next().await? {
            if let WatchEvent::Added(o) = event
                && o.metadata.name.as_deref() == cm.metadata.name.as_deref()
            {
                latencies.push(start.elapsed());
                break;
            }
        }
    }
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e3;
    println!(
        "\nwatch, create to ADDED event ({} events after the load above): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        latencies.len(),
        at(0.5),
        at(0.99),
        at(1.0)
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("| object | encoding | bytes | encode ns | decode ns |");
    println!("|---|---|---|---|---|");
    codecs::<Pod>("Pod", &fixture("pod.pb"));
    codecs::<Deployment>("Deployment", &fixture("deployment.pb"));
    println!(
        "\n| object | stored as | bytes | registry object -> bytes ns | bytes -> registry object ns |"
    );
    println!("|---|---|---|---|---|");
    storage::<Pod>("Pod", &fixture("pod.pb"));
    storage::<Deployment>("Deployment", &fixture("deployment.pb"));
    storage::<ConfigMap>("ConfigMap", &fixture("configmap.pb"));
    let binary = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/release/kapi"));
    if !binary.exists() {
        println!(
            "\n{} not found: run `cargo build --release` for the server figures",
            binary.display()
        );
        return Ok(());
    }
    through_server(&binary).await
}
