//! kapi on a real etcd, started by the tests: replicas sharing one cluster, and
//! the failure behaviour of a 3-member cluster losing members.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kapi_test_support::etcd::{EtcdCluster, etcd_available};
use kapi_test_support::{Server, http_get, http_request};
use kube::api::{Api, ListParams, ObjectMeta, PostParams, WatchEvent, WatchParams};

fn kapi() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_kapi"))
}

fn configmap_yaml(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata:\n  n: {name}\n"
    )
}

#[test]
fn two_replicas_on_one_etcd_agree() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::start(1);
    let endpoints = etcd.endpoints();
    let a = Server::start_args(kapi(), &["--etcd-servers", &endpoints]);
    let b = Server::start_args(kapi(), &["--etcd-servers", &endpoints]);

    // A watch on B, printing one line per event. It lists first (an object
    // made before it started is ADDED) and then watches from the list's
    // revision: once the marker's line shows, every later write reaches it.
    a.kubectl_stdin_ok(&["create", "-f", "-"], &configmap_yaml("watch-start"));
    let mut watcher = b
        .kubectl_command(&[
            "get",
            "configmaps",
            "-n",
            "default",
            "-w",
            "--output-watch-events",
            "--request-timeout=60s",
            "-o",
            "jsonpath={.type} {.object.metadata.name} {.object.metadata.resourceVersion}{\"\\n\"}",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = lines.clone();
    let stdout = watcher.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            sink.lock().unwrap().push(line);
        }
    });
    let listed = Instant::now() + Duration::from_secs(20);
    while !lines
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.starts_with("ADDED watch-start "))
    {
        assert!(Instant::now() < listed, "the watch never listed the marker");
        std::thread::sleep(Duration::from_millis(50));
    }

    let mut expected = vec!["ADDED watch-start".to_owned()];
    for i in 0..6 {
        let name = format!("cm-{i}");
        a.kubectl_stdin_ok(&["create", "-f", "-"], &configmap_yaml(&name));
        // Readable through the other replica at once.
        assert!(
            b.kubectl_ok(&["get", "configmap", &name, "-o", "name"])
                .contains(&name)
        );
        expected.push(format!("ADDED {name}"));
    }
    a.kubectl_ok(&["label", "configmap", "cm-2", "touched=yes"]);
    expected.push("MODIFIED cm-2".into());
    a.kubectl_ok(&["delete", "configmap", "cm-4"]);
    expected.push("DELETED cm-4".into());

    let deadline = Instant::now() + Duration::from_secs(20);
    while lines.lock().unwrap().len() < expected.len() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = watcher.kill();
    let _ = watcher.wait();
    let seen = lines.lock().unwrap().clone();
    let events: Vec<String> = seen
        .iter()
        .map(|l| l.rsplit_once(' ').unwrap().0.to_owned())
        .collect();
    assert_eq!(
        events, expected,
        "B's watch sees A's writes in order, no gaps or duplicates: {seen:?}"
    );
    let revisions: Vec<u64> = seen
        .iter()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse().unwrap())
        .collect();
    assert!(
        revisions.windows(2).all(|w| w[0] < w[1]),
        "revisions only grow: {revisions:?}"
    );
}

fn client(server: &Server) -> Api<ConfigMap> {
    let client = crate::kube_client(server);
    Api::namespaced(client, "default")
}

fn cm(name: String) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_etcd_members_loses_no_acknowledged_write() {
    if !etcd_available() {
        return;
    }
    let mut etcd = EtcdCluster::start(3);
    let server = Server::start_args(kapi(), &["--etcd-servers", &etcd.endpoints()]);
    let api = client(&server);
    let start_rv = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut watch = api
        .watch(&WatchParams::default().timeout(290), &start_rv)
        .await
        .unwrap()
        .boxed();

    // A burst of creates while one member dies: every 2xx must survive.
    let acknowledged = Arc::new(Mutex::new(BTreeSet::new()));
    let mut tasks = Vec::new();
    for t in 0..8 {
        let (api, acknowledged) = (api.clone(), acknowledged.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0..25 {
                let name = format!("burst-{t}-{i}");
                if api
                    .create(&PostParams::default(), &cm(name.clone()))
                    .await
                    .is_ok()
                {
                    acknowledged.lock().unwrap().insert(name);
                }
            }
        }));
    }
    // The member dies mid-burst: once some creates are acknowledged.
    let started = Instant::now() + Duration::from_secs(30);
    while acknowledged.lock().unwrap().len() < 20 {
        assert!(Instant::now() < started, "no creates acknowledged");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    etcd.kill(0);
    for task in tasks {
        task.await.unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(
        acknowledged.len() > 100,
        "most creates succeed with one member down: {}",
        acknowledged.len()
    );
    let listed: BTreeSet<String> = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    let lost: Vec<_> = acknowledged.difference(&listed).collect();
    assert!(lost.is_empty(), "acknowledged creates lost: {lost:?}");

    // Quorum lost: a clear 5xx Status in bounded time, and not ready.
    etcd.kill(1);
    let began = Instant::now();
    // One raw request: kube-rs would retry 503s on its own.
    let body = r#"{"metadata":{"name":"during-outage"}}"#;
    let path = "/api/v1/namespaces/default/configmaps";
    let answer =
        tokio::task::block_in_place(|| http_request(server.address, "POST", path, Some(body)));
    // Each etcd call is bounded (10 s) and so is the whole request (60 s).
    let took = began.elapsed();
    assert!(
        took < Duration::from_secs(75),
        "no hang past the request timeout: {took:?}"
    );
    let (code, status) = answer.expect("an answer");
    assert!(code >= 500, "{code} {status}");
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["kind"], "Status", "{status}");
    // A failed check is a 500 listing the checks, as k8s.io/apiserver's healthz.
    let ready = tokio::task::block_in_place(|| http_get(server.address, "/readyz?verbose"));
    let (code, body) = ready.expect("an answer from /readyz");
    assert_eq!(code, 500, "/readyz reports the outage: {body}");
    assert!(
        body.contains("[-]etcd failed: reason withheld") && body.ends_with("readyz check failed\n"),
        "{body}"
    );

    // etcd comes back; kapi recovers by itself.
    etcd.spawn(0);
    etcd.spawn(1);
    let deadline = Instant::now() + Duration::from_secs(60);
    while http_get(server.address, "/readyz").map(|(code, _)| code) != Some(200) {
        assert!(Instant::now() < deadline, "kapi did not recover");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    api.create(&PostParams::default(), &cm("after-outage".into()))
        .await
        .unwrap();

    // The watch opened before the outage never skips silently: it delivered
    // every acknowledged create in order, or it ended / reported an error, after
    // which clients re-list.
    let mut seen = BTreeSet::new();
    let mut ended = false;
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline && !seen.contains("after-outage") {
        match tokio::time::timeout(Duration::from_secs(5), watch.next()).await {
            Ok(Some(Ok(WatchEvent::Added(c)))) => {
                seen.insert(c.metadata.name.unwrap());
            }
            Ok(Some(Ok(WatchEvent::Error(_)))) | Ok(Some(Err(_))) | Ok(None) => {
                ended = true;
                break;
            }
            Ok(Some(Ok(_))) | Err(_) => {}
        }
    }
    if !ended {
        let missing: Vec<_> = acknowledged.difference(&seen).collect();
        assert!(
            missing.is_empty(),
            "a live watch skipped events: {missing:?}"
        );
        assert!(seen.contains("after-outage"));
    }
}
