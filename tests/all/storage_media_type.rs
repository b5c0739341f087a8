//! `kapi serve --storage-media-type` on a real etcd, read back through etcd's v3
//! HTTP gateway as `curl` or `etcdctl` would: JSON as it is, protobuf (the
//! default) as kube-apiserver's envelope, which Kubernetes' etcd tools decode; and
//! a server restarted with another media type serves what the first one stored.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use kapi_api_types::core::v1::ConfigMap;
use kapi_runtime::proto::{Message, envelope};
use kapi_test_support::etcd::{EtcdCluster, etcd_available};
use kapi_test_support::{Server, http_request};

fn kapi() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_kapi"))
}

/// The value stored under `key`, read with etcd's v3 JSON gateway (`/v3/kv/range`).
fn etcd_value(endpoints: &str, key: &str) -> Vec<u8> {
    let address: SocketAddr = endpoints
        .split(',')
        .next()
        .and_then(|u| u.strip_prefix("http://"))
        .and_then(|a| a.parse().ok())
        .expect("an http endpoint");
    let body = serde_json::json!({ "key": STANDARD.encode(key) }).to_string();
    let (code, text) = http_request(address, "POST", "/v3/kv/range", Some(&body)).unwrap();
    assert_eq!(code, 200, "{text}");
    let range: serde_json::Value = serde_json::from_str(&text).unwrap();
    let value = range["kvs"][0]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("no {key} in {text}"));
    STANDARD.decode(value).unwrap()
}

#[test]
fn media_types_on_etcd() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::start(1);
    let endpoints = etcd.endpoints();
    let key = |name: &str| format!("/registry/configmaps/default/{name}");

    // JSON, readable in a dump as it is.
    let mut json_server = Server::start_args(
        kapi(),
        &[
            "--etcd-servers",
            &endpoints,
            "--storage-media-type",
            "application/json",
        ],
    );
    json_server.kubectl_ok(&["create", "configmap", "one", "--from-literal=k=v1"]);
    json_server.kubectl_ok(&["create", "deployment", "web", "--image=nginx"]);
    let dumped: serde_json::Value =
        serde_json::from_slice(&etcd_value(&endpoints, &key("one"))).expect("JSON in etcd");
    assert_eq!(dumped["kind"], "ConfigMap");
    assert_eq!(dumped["data"]["k"], "v1");
    assert!(dumped["metadata"].get("resourceVersion").is_none());
    assert_eq!(json_server.terminate(), Some(0));

    // Restarted with the default, protobuf, on the same etcd.
    let protobuf_server = Server::start_args(kapi(), &["--etcd-servers", &endpoints]);
    let get = |what: &str, path: &str| {
        protobuf_server.kubectl_ok(&["get", what, "-o", &format!("jsonpath={path}")])
    };
    assert_eq!(get("configmap/one", "{.data.k}"), "v1");
    assert_eq!(
        get(
            "deployment/web",
            "{.spec.template.spec.containers[0].image}"
        ),
        "nginx"
    );
    protobuf_server.kubectl_ok(&["create", "configmap", "two", "--from-literal=k=v2"]);
    protobuf_server.kubectl_ok(&["label", "configmap", "one", "moved=yes"]);
    for (name, value) in [("one", "v1"), ("two", "v2")] {
        let bytes = etcd_value(&endpoints, &key(name));
        let unknown = envelope::decode(&bytes).expect("protobuf envelope in etcd");
        assert_eq!((unknown.api_version, unknown.kind), ("v1", "ConfigMap"));
        let cm = ConfigMap::decode(unknown.raw).unwrap();
        assert_eq!(cm.data.unwrap()["k"], value);
    }
    assert_eq!(
        protobuf_server.kubectl_ok(&["get", "configmaps", "-l", "moved=yes", "-o", "name"]),
        "configmap/one\n"
    );
    protobuf_server.kubectl_ok(&[
        "patch",
        "deployment",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
    ]);
    assert_eq!(get("deployment/web", "{.spec.replicas}"), "3");
}

#[test]
fn unknown_media_type_is_refused_at_start() {
    let out = std::process::Command::new(kapi())
        .args(["serve", "--storage-media-type", "text/plain"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unsupported storage media type \"text/plain\""),
        "{stderr}"
    );
}
