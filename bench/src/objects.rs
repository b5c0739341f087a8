//! The objects the scenarios write: 1 KiB ConfigMaps and realistic small Pods,
//! and the paths they live at.

use bytes::Bytes;
use serde_json::{Value, json};

use crate::random::Rng;

/// Bytes of the `payload` value of every ConfigMap.
pub const PAYLOAD_BYTES: usize = 1024;

/// The name of ConfigMap number `index`.
pub fn configmap_name(index: u64) -> String {
    format!("cm-{index:06}")
}

/// The name of Pod number `index`.
pub fn pod_name(index: u64) -> String {
    format!("pod-{index:06}")
}

/// The collection path of `resource` (core group) in `namespace`.
pub fn collection(namespace: &str, resource: &str) -> String {
    format!("/api/v1/namespaces/{namespace}/{resource}")
}

/// The path of one object.
pub fn object(namespace: &str, resource: &str, name: &str) -> String {
    format!("/api/v1/namespaces/{namespace}/{resource}/{name}")
}

/// 1 KiB of hex digits that differ from call to call.
pub fn payload(rng: &mut Rng) -> String {
    let mut value = String::with_capacity(PAYLOAD_BYTES);
    while value.len() < PAYLOAD_BYTES {
        value.push_str(&format!("{:016x}", rng.next_u64()));
    }
    value.truncate(PAYLOAD_BYTES);
    value
}

/// A ConfigMap with a 1 KiB `payload`, and `sent` (microseconds on the bench's
/// clock) when the watch scenarios time its events.
pub fn configmap(name: &str, payload: &str, sent: Option<u64>) -> Value {
    let mut data = json!({ "payload": payload });
    if let Some(sent) = sent {
        data["sent"] = json!(sent.to_string());
    }
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": { "name": name, "labels": { "app": "kapi-bench" } },
        "data": data,
    })
}

/// Nodes the pods are spread over (no kubelet runs: the names are all there
/// is of them), about as many pods each as a kubelet runs at most (110).
pub const NODES: u64 = 500;

/// The node pod number `index` of `pods50k` is bound to.
pub fn node_name(index: u64) -> String {
    format!("node-{:03}", index % NODES)
}

/// The node pod number `index` of `watch-nodes` is bound to: other nodes
/// than `pods50k`'s, whose lists count only their own pods.
pub fn watched_node_name(index: u64) -> String {
    format!("watched-node-{:03}", index % NODES)
}

/// The name of pod number `index` of `watch-nodes`.
pub fn watched_pod_name(index: u64) -> String {
    format!("watched-pod-{index:06}")
}

/// A pod as a Deployment would stamp it: one container with an image, ports,
/// resources, environment and probes, a few labels; bound to one of
/// [`NODES`] nodes, as a scheduler would have placed it.
pub fn pod(name: &str, index: u64, node: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {
                "app": "web",
                "tier": "frontend",
                "pod-template-hash": "7d4b9c8f6d",
                "shard": (index % 16).to_string(),
            },
            "annotations": { "kapi-bench/index": index.to_string() },
        },
        "spec": {
            "containers": [{
                "name": "web",
                "image": "registry.k8s.io/nginx-slim:0.27",
                "ports": [{ "name": "http", "containerPort": 8080, "protocol": "TCP" }],
                "env": [
                    { "name": "MODE", "value": "production" },
                    { "name": "POD_NAME", "valueFrom": { "fieldRef": { "fieldPath": "metadata.name" } } },
                ],
                "resources": {
                    "requests": { "cpu": "100m", "memory": "128Mi" },
                    "limits": { "cpu": "500m", "memory": "256Mi" },
                },
                "readinessProbe": {
                    "httpGet": { "path": "/healthz", "port": 8080 },
                    "periodSeconds": 10,
                },
            }],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "nodeName": node,
        },
    })
}

/// A JSON value as a request body.
pub fn body(value: &Value) -> Bytes {
    Bytes::from(value.to_string())
}
