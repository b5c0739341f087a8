//! kapi keeps its objects in etcd as kube-apiserver 1.32 keeps them, so that
//! the two can take over from each other on one etcd: the keys, encodings
//! and stored versions kube-apiserver wrote for a workload of common kinds
//! (`../shared/recorded/kube-apiserver-1.32-etcd-layout.tsv`) against what
//! kapi writes for the same workload; values built in upstream's format
//! served and written back in it; kapi's own earlier layout moved once; and
//! two replicas sharing the Service address bitmap.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use kapi_runtime::proto::envelope;
use kapi_runtime::proto::wire::{Reader, WireType, put_bytes, put_key, put_varint};
use kapi_storage::etcd::{EtcdOptions, EtcdStore};
use kapi_storage::{ListOptions, Storage};
use kapi_test_support::Server;
use kapi_test_support::etcd::{EtcdCluster, etcd_available};
use serde_json::{Value, json};

fn kapi() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_kapi"))
}

fn recorded_layout() -> Option<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/recorded/kube-apiserver-1.32-etcd-layout.tsv"
    );
    let text = std::fs::read_to_string(path).ok();
    if text.is_none() {
        assert!(!kapi_test_support::require::require(
            false,
            "../shared/recorded",
            "the recorded kube-apiserver etcd layout beside this repository"
        ));
    }
    text
}

/// One stored value as the recording describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stored {
    encoding: &'static str,
    api_version: String,
    kind: String,
}

/// How a value is stored: its encoding and its type.
fn describe(value: &[u8]) -> Stored {
    if value.starts_with(envelope::MAGIC) {
        let unknown = envelope::decode(value).expect("a protobuf envelope");
        return Stored {
            encoding: "protobuf",
            api_version: unknown.api_version.to_owned(),
            kind: unknown.kind.to_owned(),
        };
    }
    let object: Value = serde_json::from_slice(value).expect("a JSON value");
    Stored {
        encoding: "json",
        api_version: object["apiVersion"].as_str().unwrap_or_default().to_owned(),
        kind: object["kind"].as_str().unwrap_or_default().to_owned(),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Every key under `/registry/` in the etcd at `endpoints`, with its value.
fn etcd_dump(endpoints: &str) -> BTreeMap<String, Vec<u8>> {
    runtime().block_on(async {
        let store = EtcdStore::connect(EtcdOptions::new(endpoints.split(',')))
            .await
            .unwrap();
        let listed = store
            .list("/registry/", ListOptions::default())
            .await
            .unwrap();
        listed
            .items
            .into_iter()
            .map(|kv| (kv.key, kv.value.to_vec()))
            .collect()
    })
}

/// Writes `values` into the etcd at `endpoints` as they are.
fn etcd_put(endpoints: &str, values: &[(String, Vec<u8>)]) {
    runtime().block_on(async {
        let store = EtcdStore::connect(EtcdOptions::new(endpoints.split(',')))
            .await
            .unwrap();
        for (key, value) in values {
            store.create(key, value.clone().into()).await.unwrap();
        }
    });
}

/// The resource prefix of a recorded key: the key without its namespace
/// and name (`/registry/services/specs/rec/web` → `services/specs`).
fn resource_prefix(key: &str, namespaced: bool) -> String {
    let rest = key.trim_start_matches("/registry/");
    let segments: Vec<&str> = rest.split('/').collect();
    let keep = segments.len() - if namespaced { 2 } else { 1 };
    segments[..keep].join("/")
}

/// Whether objects of `kind` live in namespaces.
fn namespaced(kind: &str) -> bool {
    !matches!(
        kind,
        "Namespace"
            | "Node"
            | "PersistentVolume"
            | "ClusterRole"
            | "ClusterRoleBinding"
            | "PriorityClass"
            | "StorageClass"
            | "CustomResourceDefinition"
            | "APIService"
            | "FlowSchema"
            | "PriorityLevelConfiguration"
            | "RangeAllocation"
            | "CSIDriver"
            | "CSINode"
            | "VolumeAttachment"
            | "RuntimeClass"
            | "IngressClass"
            | "MutatingWebhookConfiguration"
            | "ValidatingWebhookConfiguration"
            | "ValidatingAdmissionPolicy"
            | "ValidatingAdmissionPolicyBinding"
            | "CertificateSigningRequest"
    )
}

/// The workload's object for a recorded key: the same kind, namespace and
/// name, with the least a valid object of the kind needs.
fn manifest(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> Value {
    let labels = json!({"app": "layout"});
    let template = json!({"metadata": {"labels": labels},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let job_template = json!({"metadata": {"labels": labels},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}});
    let rules = json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]);
    let spec_and_more = match kind {
        "ConfigMap" => json!({"data": {"k": "v"}}),
        "Secret" => json!({"stringData": {"k": "v"}}),
        "ServiceAccount" | "Namespace" | "Node" => json!({}),
        "Pod" => json!({"spec": template["spec"]}),
        "Deployment" | "ReplicaSet" | "DaemonSet" => json!({"spec": {
            "selector": {"matchLabels": labels}, "template": template}}),
        "StatefulSet" => json!({"spec": {"serviceName": "db-headless",
            "selector": {"matchLabels": labels}, "template": template}}),
        "Job" => json!({"spec": {"template": job_template}}),
        "CronJob" => json!({"spec": {"schedule": "0 3 * * *",
            "jobTemplate": {"spec": {"template": job_template}}}}),
        "Service" => {
            let (kind, cluster_ip) = match name {
                "np1" | "web-nodeport" => ("NodePort", None),
                "ingress-lb" => ("LoadBalancer", None),
                "db-headless" => ("ClusterIP", Some("None")),
                _ => ("ClusterIP", None),
            };
            let mut spec = json!({"type": kind, "selector": labels,
                "ports": [{"port": 80, "targetPort": 8080}]});
            if let Some(ip) = cluster_ip {
                spec["clusterIP"] = ip.into();
            }
            json!({"spec": spec})
        }
        "EndpointSlice" => json!({"addressType": "IPv4", "endpoints": [],
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}),
        "HorizontalPodAutoscaler" => json!({"spec": {"maxReplicas": 3,
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}}}),
        "Ingress" => json!({"spec": {"defaultBackend": {"service": {"name": "web",
            "port": {"number": 80}}}}}),
        "Lease" => json!({"spec": {"holderIdentity": "layout"}}),
        "LimitRange" => json!({"spec": {"limits": [{"type": "Container",
            "default": {"cpu": "100m"}}]}}),
        "NetworkPolicy" => json!({"spec": {"podSelector": {}}}),
        "PersistentVolumeClaim" => json!({"spec": {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}}),
        "PersistentVolume" => json!({"spec": {"accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "1Gi"}, "hostPath": {"path": "/tmp/layout"}}}),
        "PodDisruptionBudget" => json!({"spec": {"minAvailable": 1,
            "selector": {"matchLabels": labels}}}),
        "PriorityClass" => json!({"value": 1000}),
        "ResourceQuota" => json!({"spec": {"hard": {"pods": "10"}}}),
        "Role" | "ClusterRole" => json!({"rules": rules}),
        "RoleBinding" => json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role", "name": "pod-reader"},
            "subjects": [{"kind": "User", "name": "layout"}]}),
        "ClusterRoleBinding" => json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "layout"}]}),
        "StorageClass" => json!({"provisioner": "example.com/layout"}),
        "CustomResourceDefinition" => json!({"spec": {"group": "bar.example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer",
                    "jsonPath": ".spec.size"}]}]}}),
        "Widget" => json!({"spec": {"size": 3}}),
        other => panic!("the workload has no manifest for a {other}"),
    };
    let mut object = spec_and_more;
    object["apiVersion"] = api_version.into();
    object["kind"] = kind.into();
    object["metadata"] = json!({"name": name});
    if let Some(ns) = namespace {
        object["metadata"]["namespace"] = ns.into();
    }
    object
}

/// The recorded objects the workload made (not those the server or a
/// controller made): in the namespace `rec`, or named so.
fn workload_lines(recorded: &str) -> Vec<(String, Stored)> {
    let workload_names = [
        "crb1",
        "parity-metrics-reader",
        "rec-node",
        "parity-node-1",
        "parity-pv-local",
        "parity-high",
        "parity-fast",
        "widgets.bar.example.com",
        "rec",
        "parity-team-a",
    ];
    recorded
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let (key, encoding, api_version, kind) = (cols[0], cols[1], cols[2], cols[3]);
            let name = key.rsplit('/').next().unwrap_or_default();
            let in_rec = key.contains("/rec/");
            // The service account controller's, not the workload's (checked
            // with the server's objects).
            let by_controller = kind == "ServiceAccount" && name == "default";
            ((in_rec || workload_names.contains(&name)) && !by_controller).then(|| {
                (
                    key.to_owned(),
                    Stored {
                        encoding: if encoding == "json" {
                            "json"
                        } else {
                            "protobuf"
                        },
                        api_version: api_version.to_owned(),
                        kind: kind.to_owned(),
                    },
                )
            })
        })
        .collect()
}

/// The key's namespace and name.
fn namespace_and_name(key: &str, kind: &str) -> (Option<String>, String) {
    let parts: Vec<&str> = key.rsplitn(3, '/').collect();
    if namespaced(kind) {
        (Some(parts[1].to_owned()), parts[0].to_owned())
    } else {
        (None, parts[0].to_owned())
    }
}

/// Resource prefixes kube-apiserver 1.32 uses that the recording does not
/// show (no object of the kind was made), from its storage factory's table
/// and its resources' plurals: kapi may write these too.
const UNRECORDED_PREFIXES: &[&str] = &[
    "controllers",
    "services/endpoints",
    "podtemplates",
    "controllerrevisions",
    "certificatesigningrequests",
    "csidrivers",
    "csinodes",
    "csistoragecapacities",
    "volumeattachments",
    "runtimeclasses",
    "ingressclasses",
    "mutatingwebhookconfigurations",
    "validatingwebhookconfigurations",
    "validatingadmissionpolicies",
    "validatingadmissionpolicybindings",
];

#[test]
fn a_workload_is_kept_under_kube_apiservers_keys() {
    if !etcd_available() {
        return;
    }
    let Some(recorded) = recorded_layout() else {
        return;
    };
    let etcd = EtcdCluster::start(1);
    let endpoints = etcd.endpoints();
    // Pods need their namespace's default service account.
    let server = Server::start_args(
        kapi(),
        &["--etcd-servers", &endpoints, "--controllers=serviceaccount"],
    );
    let workload = workload_lines(&recorded);
    assert!(workload.len() > 40, "{} workload keys", workload.len());
    // Namespaces and definitions first, then the rest, as one would apply them.
    let order = |kind: &str| match kind {
        "Namespace" => 0,
        "CustomResourceDefinition" => 1,
        "Widget" => 3,
        _ => 2,
    };
    let mut sorted = workload.clone();
    sorted.sort_by_key(|(_, s)| order(&s.kind));
    for (key, stored) in &sorted {
        let (namespace, name) = namespace_and_name(key, &stored.kind);
        // Each written through the version the recording names, except the
        // HPA made through autoscaling/v1 and stored as v2.
        let api_version = match (stored.kind.as_str(), name.as_str()) {
            (_, "api-v1") => "autoscaling/v1",
            ("CustomResourceDefinition", _) => "apiextensions.k8s.io/v1",
            _ => &stored.api_version,
        };
        let object = manifest(api_version, &stored.kind, namespace.as_deref(), &name);
        if stored.kind == "Widget" {
            server.kubectl_ok(&[
                "wait",
                "--for=condition=Established",
                "crd/widgets.bar.example.com",
                "--timeout=30s",
            ]);
            let deadline = Instant::now() + Duration::from_secs(30);
            while !server.kubectl(&["get", "widgets", "-A"]).status.success() {
                assert!(Instant::now() < deadline, "widgets never served");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        server.kubectl_stdin_ok(&["create", "-f", "-"], &object.to_string());
        if stored.kind == "Namespace" {
            let deadline = Instant::now() + Duration::from_secs(30);
            while !server
                .kubectl(&["get", "serviceaccount", "default", "-n", &name])
                .status
                .success()
            {
                assert!(Instant::now() < deadline, "no default service account");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    let dump = etcd_dump(&endpoints);
    let mut wrong = Vec::new();
    for (key, expected) in &workload {
        match dump.get(key) {
            None => wrong.push(format!("{key}: not written by kapi")),
            Some(value) => {
                let ours = describe(value);
                if ours != *expected {
                    wrong.push(format!("{key}: kapi {ours:?}, upstream {expected:?}"));
                }
            }
        }
    }
    // What kube-apiserver writes at start and kapi writes too.
    for key in [
        "/registry/namespaces/default",
        "/registry/namespaces/kube-system",
        "/registry/namespaces/kube-public",
        "/registry/namespaces/kube-node-lease",
        "/registry/configmaps/kube-system/extension-apiserver-authentication",
        "/registry/configmaps/kube-system/kube-apiserver-legacy-service-account-token-tracking",
        "/registry/services/specs/default/kubernetes",
        "/registry/serviceaccounts/rec/default",
        "/registry/ranges/serviceips",
        "/registry/ranges/servicenodeports",
        "/registry/priorityclasses/system-cluster-critical",
        "/registry/clusterroles/cluster-admin",
        "/registry/clusterrolebindings/cluster-admin",
        "/registry/flowschemas/exempt",
        "/registry/prioritylevelconfigurations/global-default",
        "/registry/apiregistration.k8s.io/apiservices/v1.",
        "/registry/apiregistration.k8s.io/apiservices/v2.autoscaling",
        "/registry/apiregistration.k8s.io/apiservices/v1.bar.example.com",
    ] {
        let line = recorded
            .lines()
            .find(|l| l.split('\t').next() == Some(key))
            .unwrap_or_else(|| panic!("{key} is not in the recording"));
        let cols: Vec<&str> = line.split('\t').collect();
        let expected = Stored {
            encoding: if cols[1] == "json" {
                "json"
            } else {
                "protobuf"
            },
            api_version: cols[2].to_owned(),
            kind: cols[3].to_owned(),
        };
        match dump.get(key) {
            None => wrong.push(format!("{key}: not written by kapi")),
            Some(value) if describe(value) != expected => wrong.push(format!(
                "{key}: kapi {:?}, upstream {expected:?}",
                describe(value)
            )),
            Some(_) => {}
        }
    }
    // No key under a prefix kube-apiserver does not use.
    let mut prefixes: BTreeSet<String> = recorded
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            resource_prefix(cols[0], namespaced(cols[3]))
        })
        .collect();
    prefixes.extend(UNRECORDED_PREFIXES.iter().map(|p| (*p).to_owned()));
    for (key, value) in &dump {
        if key.starts_with("/registry/kapi.dev/") {
            continue;
        }
        let kind = describe(value).kind;
        let prefix = resource_prefix(key, namespaced(&kind));
        if !prefixes.contains(&prefix) {
            wrong.push(format!(
                "{key}: a {kind} under {prefix:?}, a prefix upstream does not use"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A protobuf message written field by field, as upstream's generated code
/// writes it (numbers from upstream's `.proto`), to seed etcd with values
/// kapi's own codec did not make.
#[derive(Default)]
struct Message(Vec<u8>);

impl Message {
    fn string(mut self, number: u32, value: &str) -> Message {
        put_bytes(&mut self.0, number, value.as_bytes());
        self
    }

    fn bytes(mut self, number: u32, value: &[u8]) -> Message {
        put_bytes(&mut self.0, number, value);
        self
    }

    fn message(self, number: u32, value: Message) -> Message {
        let inner = value.0;
        self.bytes(number, &inner)
    }

    fn varint(mut self, number: u32, value: u64) -> Message {
        put_key(&mut self.0, number, WireType::Varint);
        put_varint(&mut self.0, value);
        self
    }

    fn map_entry(self, number: u32, key: &str, value: &str) -> Message {
        self.message(number, Message::default().string(1, key).string(2, value))
    }
}

/// ObjectMeta: name 1, namespace 3, uid 5, creationTimestamp 8 (Time:
/// seconds 1), labels 11.
fn object_meta(namespace: Option<&str>, name: &str) -> Message {
    let mut meta = Message::default().string(1, name);
    if let Some(ns) = namespace {
        meta = meta.string(3, ns);
    }
    meta.string(5, &format!("00000000-0000-4000-8000-{:012x}", name.len()))
        .message(8, Message::default().varint(1, 1_764_000_000))
}

fn enveloped(api_version: &str, kind: &str, message: Message) -> Vec<u8> {
    envelope::encode(api_version, kind, &message.0)
}

/// A Service of upstream's 1.32 as its registry stores it after defaulting.
fn upstream_service(name: &str, ip: &str, node_port: Option<u64>) -> Vec<u8> {
    let mut port = Message::default()
        .string(2, "TCP")
        .varint(3, 80)
        .message(4, Message::default().varint(1, 0).varint(2, 8080));
    if let Some(node_port) = node_port {
        port = port.varint(5, node_port);
    }
    let kind = if node_port.is_some() {
        "NodePort"
    } else {
        "ClusterIP"
    };
    let mut spec = Message::default()
        .message(1, port)
        .map_entry(2, "app", name)
        .string(3, ip)
        .string(4, kind)
        .string(7, "None")
        .string(17, "SingleStack")
        .string(18, ip)
        .string(19, "IPv4")
        .string(22, "Cluster");
    if node_port.is_some() {
        spec = spec.string(11, "Cluster");
    }
    enveloped(
        "v1",
        "Service",
        Message::default()
            .message(1, object_meta(Some("mig"), name))
            .message(2, spec),
    )
}

/// A RangeAllocation as upstream's allocator stores it: `data` is the
/// big-endian bytes of the bitmap as one integer.
fn upstream_range(range: &str, offsets: &[usize]) -> Vec<u8> {
    let mut integer = vec![0u8; offsets.iter().max().map_or(0, |m| m / 8 + 1)];
    let len = integer.len();
    for o in offsets {
        integer[len - 1 - o / 8] |= 1 << (o % 8);
    }
    enveloped(
        "v1",
        "RangeAllocation",
        Message::default()
            .message(1, Message::default())
            .string(2, range)
            .bytes(3, &integer),
    )
}

/// The offsets a stored RangeAllocation marks, and its range.
fn read_range(value: &[u8]) -> (String, Vec<usize>) {
    let unknown = envelope::decode(value).expect("a protobuf RangeAllocation");
    assert_eq!(
        (unknown.api_version, unknown.kind),
        ("v1", "RangeAllocation")
    );
    let mut reader = Reader::new(unknown.raw);
    let (mut range, mut data) = (String::new(), Vec::new());
    while !reader.is_empty() {
        let (number, wire) = reader.key().unwrap();
        match number {
            2 => range = String::from_utf8(reader.len_delimited().unwrap().to_vec()).unwrap(),
            3 => data = reader.len_delimited().unwrap().to_vec(),
            _ => reader.skip(wire).unwrap(),
        }
    }
    assert!(
        data.first() != Some(&0),
        "Go's big.Int bytes have no leading zero"
    );
    let offsets = data
        .iter()
        .rev()
        .enumerate()
        .flat_map(|(i, byte)| {
            (0..8)
                .filter(move |b| byte & (1 << b) != 0)
                .map(move |b| i * 8 + b)
        })
        .collect();
    (range, offsets)
}

/// A CustomResourceDefinition as kube-apiserver 1.32 stores it: v1beta1
/// JSON, the shared schema and columns in `spec`.
fn upstream_crd() -> Vec<u8> {
    let crd = json!({
        "kind": "CustomResourceDefinition",
        "apiVersion": "apiextensions.k8s.io/v1beta1",
        "metadata": {"name": "widgets.bar.example.com", "uid": "00000000-0000-4000-8000-0000000000cd",
            "generation": 1, "creationTimestamp": "2026-11-28T10:00:00Z"},
        "spec": {"group": "bar.example.com", "version": "v1",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "validation": {"openAPIV3Schema": {"type": "object",
                "x-kubernetes-preserve-unknown-fields": true}},
            "versions": [{"name": "v1", "served": true, "storage": true}],
            "additionalPrinterColumns": [{"name": "Size", "type": "integer", "JSONPath": ".spec.size"}],
            "conversion": {"strategy": "None"},
            "preserveUnknownFields": false},
        "status": {"conditions": [
                {"type": "NamesAccepted", "status": "True", "lastTransitionTime": "2026-11-28T10:00:00Z",
                 "reason": "NoConflicts", "message": "no conflicts found"},
                {"type": "Established", "status": "True", "lastTransitionTime": "2026-11-28T10:00:00Z",
                 "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}],
            "acceptedNames": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "storedVersions": ["v1"]}
    });
    let mut bytes = serde_json::to_vec(&crd).unwrap();
    bytes.push(b'\n');
    bytes
}

fn upstream_seed() -> Vec<(String, Vec<u8>)> {
    let namespace = enveloped(
        "v1",
        "Namespace",
        Message::default()
            .message(1, object_meta(None, "mig"))
            .message(2, Message::default().string(1, "kubernetes"))
            .message(3, Message::default().string(1, "Active")),
    );
    let configmap = enveloped(
        "v1",
        "ConfigMap",
        Message::default()
            .message(1, object_meta(Some("mig"), "cm1"))
            .map_entry(2, "k", "v"),
    );
    let node = enveloped(
        "v1",
        "Node",
        Message::default().message(1, object_meta(None, "n1")),
    );
    let labels = |m: Message| m.map_entry(1, "app", "d1");
    let template = Message::default()
        .message(1, Message::default().map_entry(11, "app", "d1"))
        .message(
            2,
            Message::default().message(2, Message::default().string(1, "c").string(2, "busybox")),
        );
    let deployment = enveloped(
        "apps/v1",
        "Deployment",
        Message::default()
            .message(1, object_meta(Some("mig"), "d1"))
            .message(
                2,
                Message::default()
                    .varint(1, 1)
                    .message(2, labels(Message::default()))
                    .message(3, template),
            ),
    );
    let widget = json!({"apiVersion": "bar.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "mig", "uid": "00000000-0000-4000-8000-0000000000e1",
            "creationTimestamp": "2026-11-28T10:00:01Z", "generation": 1},
        "spec": {"size": 3}});
    vec![
        ("/registry/namespaces/mig".into(), namespace),
        ("/registry/configmaps/mig/cm1".into(), configmap),
        ("/registry/minions/n1".into(), node),
        ("/registry/deployments/mig/d1".into(), deployment),
        (
            "/registry/services/specs/mig/s1".into(),
            upstream_service("s1", "10.0.0.10", None),
        ),
        (
            "/registry/services/specs/mig/s2".into(),
            upstream_service("s2", "10.0.0.11", Some(30005)),
        ),
        // 10.0.0.10 and .11 are offsets 9 and 10 from 10.0.0.1; 30005 is 5.
        (
            "/registry/ranges/serviceips".into(),
            upstream_range("10.0.0.0/24", &[9, 10]),
        ),
        (
            "/registry/ranges/servicenodeports".into(),
            upstream_range("30000-32767", &[5]),
        ),
        (
            "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.bar.example.com"
                .into(),
            upstream_crd(),
        ),
        (
            "/registry/bar.example.com/widgets/mig/w1".into(),
            serde_json::to_vec(&widget).unwrap(),
        ),
    ]
}

#[test]
fn values_kube_apiserver_wrote_are_served_and_written_back_as_it_writes_them() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::start(1);
    let endpoints = etcd.endpoints();
    etcd_put(&endpoints, &upstream_seed());
    let server = Server::start_args(
        kapi(),
        &[
            "--etcd-servers",
            &endpoints,
            "--service-cluster-ip-range=10.0.0.0/24",
        ],
    );
    let get = |args: &[&str]| server.kubectl_ok(args);
    assert_eq!(
        get(&["get", "cm", "cm1", "-n", "mig", "-o", "jsonpath={.data.k}"]),
        "v"
    );
    assert_eq!(get(&["get", "node", "n1", "-o", "name"]).trim(), "node/n1");
    assert_eq!(
        get(&[
            "get",
            "deployment",
            "d1",
            "-n",
            "mig",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}"
        ]),
        "busybox"
    );
    assert_eq!(
        get(&[
            "get",
            "svc",
            "s2",
            "-n",
            "mig",
            "-o",
            "jsonpath={.spec.clusterIP} {.spec.ports[0].nodePort}"
        ]),
        "10.0.0.11 30005"
    );
    // The definition reads as v1: the shared schema and columns in its version.
    let crd: Value = serde_json::from_str(&get(&[
        "get",
        "crd",
        "widgets.bar.example.com",
        "-o",
        "json",
    ]))
    .unwrap();
    let version = &crd["spec"]["versions"][0];
    assert_eq!(
        version["schema"]["openAPIV3Schema"]["type"], "object",
        "{crd}"
    );
    assert_eq!(
        version["additionalPrinterColumns"][0]["jsonPath"], ".spec.size",
        "{crd}"
    );
    assert!(crd["spec"].get("validation").is_none(), "{crd}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = server.kubectl(&[
            "get",
            "widgets",
            "-n",
            "mig",
            "-o",
            "custom-columns=SIZE:.spec.size",
            "--no-headers",
        ]);
        if out.status.success() && kapi_test_support::text(&out.stdout).trim() == "3" {
            break;
        }
        assert!(Instant::now() < deadline, "the widget was never served");
        std::thread::sleep(Duration::from_millis(100));
    }

    // The seeded bitmaps are honoured: taken values are refused, new ones differ.
    let taken_ip = server.kubectl_stdin(
        &["create", "-f", "-"],
        &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dup", "namespace": "mig"},
            "spec": {"clusterIP": "10.0.0.10", "ports": [{"port": 80}]}})
        .to_string(),
    );
    assert!(!taken_ip.status.success());
    assert!(
        kapi_test_support::text(&taken_ip.stderr).contains("provided IP is already allocated"),
        "{}",
        kapi_test_support::text(&taken_ip.stderr)
    );
    let taken_port = server.kubectl_stdin(
        &["create", "-f", "-"],
        &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dup", "namespace": "mig"},
            "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30005}]}})
        .to_string(),
    );
    assert!(
        kapi_test_support::text(&taken_port.stderr).contains("provided port is already allocated"),
        "{}",
        kapi_test_support::text(&taken_port.stderr)
    );
    let mut ips = BTreeSet::new();
    for i in 0..12 {
        let name = format!("new-{i}");
        server.kubectl_stdin_ok(
            &["create", "-f", "-"],
            &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "mig"},
                "spec": {"ports": [{"port": 80}]}})
            .to_string(),
        );
        ips.insert(get(&[
            "get",
            "svc",
            &name,
            "-n",
            "mig",
            "-o",
            "jsonpath={.spec.clusterIP}",
        ]));
    }
    assert_eq!(ips.len(), 12);
    assert!(!ips.contains("10.0.0.10") && !ips.contains("10.0.0.11") && !ips.contains("10.0.0.1"));

    // Writes go back in upstream's format, under the same keys.
    get(&["label", "deployment", "d1", "-n", "mig", "moved=yes"]);
    get(&["label", "crd", "widgets.bar.example.com", "moved=yes"]);
    get(&["label", "node", "n1", "moved=yes"]);
    let dump = etcd_dump(&endpoints);
    let d1 = describe(&dump["/registry/deployments/mig/d1"]);
    assert_eq!(
        (d1.encoding, d1.api_version.as_str()),
        ("protobuf", "apps/v1")
    );
    assert_eq!(describe(&dump["/registry/minions/n1"]).encoding, "protobuf");
    let crd: Value = serde_json::from_slice(
        &dump["/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.bar.example.com"],
    )
    .unwrap();
    assert_eq!(crd["apiVersion"], "apiextensions.k8s.io/v1beta1");
    assert_eq!(crd["metadata"]["labels"]["moved"], "yes");
    assert_eq!(crd["spec"]["version"], "v1");
    assert_eq!(
        crd["spec"]["validation"]["openAPIV3Schema"]["type"],
        "object"
    );
    assert_eq!(
        crd["spec"]["additionalPrinterColumns"][0]["JSONPath"],
        ".spec.size"
    );
    assert_eq!(crd["spec"]["preserveUnknownFields"], false);
    let (range, offsets) = read_range(&dump["/registry/ranges/serviceips"]);
    assert_eq!(range, "10.0.0.0/24");
    let mut expected: BTreeSet<usize> = ips
        .iter()
        .map(|ip| usize::from(ip.rsplit('.').next().unwrap().parse::<u8>().unwrap()) - 1)
        .collect();
    expected.extend([0, 9, 10]);
    assert_eq!(offsets.into_iter().collect::<BTreeSet<_>>(), expected);
    let (range, offsets) = read_range(&dump["/registry/ranges/servicenodeports"]);
    assert_eq!((range.as_str(), offsets), ("30000-32767", vec![5]));
    assert!(
        !dump
            .keys()
            .any(|k| k.starts_with("/registry/apps/") || k.starts_with("/registry/nodes/")),
        "a key of kapi's old layout"
    );
}

/// A log without its colours (SGR escapes).
fn plain(log: &str) -> String {
    let mut out = String::with_capacity(log.len());
    let mut chars = log.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn a_store_of_kapis_old_layout_is_moved_once() {
    if !etcd_available() {
        return;
    }
    use kapi_runtime::proto::Message as _;
    let etcd = EtcdCluster::start(1);
    let endpoints = etcd.endpoints();
    let typed = |value: Value| -> Vec<u8> {
        let api_version = value["apiVersion"].as_str().unwrap().to_owned();
        let kind = value["kind"].as_str().unwrap().to_owned();
        let raw = match kind.as_str() {
            "Deployment" => serde_json::from_value::<kapi_api_types::apps::v1::Deployment>(value)
                .unwrap()
                .encode_to_vec(),
            "Service" => serde_json::from_value::<kapi_api_types::core::v1::Service>(value)
                .unwrap()
                .encode_to_vec(),
            "Node" => serde_json::from_value::<kapi_api_types::core::v1::Node>(value)
                .unwrap()
                .encode_to_vec(),
            "Namespace" => serde_json::from_value::<kapi_api_types::core::v1::Namespace>(value)
                .unwrap()
                .encode_to_vec(),
            "Ingress" => serde_json::from_value::<kapi_api_types::networking::v1::Ingress>(value)
                .unwrap()
                .encode_to_vec(),
            "CustomResourceDefinition" => serde_json::from_value::<
                kapi_api_types::apiextensions::v1::CustomResourceDefinition,
            >(value)
            .unwrap()
            .encode_to_vec(),
            other => panic!("{other}"),
        };
        envelope::encode(&api_version, &kind, &raw)
    };
    let meta = |ns: Option<&str>, name: &str| {
        let mut m = json!({"name": name, "uid": format!("00000000-0000-4000-8000-{:012}", name.len()),
            "creationTimestamp": "2026-11-28T10:00:00Z"});
        if let Some(ns) = ns {
            m["namespace"] = ns.into();
        }
        m
    };
    let service = |ns: &str, name: &str, ip: &str| {
        typed(
            json!({"apiVersion": "v1", "kind": "Service", "metadata": meta(Some(ns), name),
            "spec": {"type": "ClusterIP", "clusterIP": ip, "clusterIPs": [ip], "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack", "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}]}}),
        )
    };
    // kapi's old bitmap: bit o in byte o / 8, all bytes kept, as JSON.
    let mut old_bits = vec![0u8; 32];
    old_bits[1] = 0b110;
    let old_range = json!({"kind": "RangeAllocation", "apiVersion": "v1", "metadata": {},
        "range": "10.0.0.0/24", "data": STANDARD.encode(&old_bits)});
    let mut seed = vec![
        (
            "/registry/namespaces/mig".to_owned(),
            typed(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": meta(None, "mig")})),
        ),
        (
            "/registry/namespaces/specs".to_owned(),
            typed(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": meta(None, "specs")}),
            ),
        ),
        (
            "/registry/apps/deployments/mig/d1".to_owned(),
            typed(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(Some("mig"), "d1"),
                "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}),
            ),
        ),
        (
            "/registry/services/mig/s1".to_owned(),
            service("mig", "s1", "10.0.0.10"),
        ),
        // A Service in a namespace named `specs`: its old key looks like a
        // new one's prefix.
        (
            "/registry/services/specs/s2".to_owned(),
            service("specs", "s2", "10.0.0.11"),
        ),
        (
            "/registry/nodes/n1".to_owned(),
            typed(json!({"apiVersion": "v1", "kind": "Node", "metadata": meta(None, "n1")})),
        ),
        (
            "/registry/networking.k8s.io/ingresses/mig/i1".to_owned(),
            typed(
                json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta(Some("mig"), "i1"),
                "spec": {"defaultBackend": {"service": {"name": "s1", "port": {"number": 80}}}}}),
            ),
        ),
        (
            "/registry/ranges/serviceips".to_owned(),
            old_range.to_string().into_bytes(),
        ),
        // A definition kept as v1 protobuf: same key, rewritten as upstream
        // keeps it.
        (
            "/registry/apiextensions.k8s.io/customresourcedefinitions/gadgets.example.com"
                .to_owned(),
            typed(
                json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": meta(None, "gadgets.example.com"),
                "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object"}}}]},
                "status": {"acceptedNames": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget",
                    "listKind": "GadgetList"}, "storedVersions": ["v1"],
                    "conditions": [{"type": "Established", "status": "True",
                        "lastTransitionTime": "2026-11-28T10:00:00Z", "reason": "InitialNamesAccepted",
                        "message": "the initial names have been accepted"}]}}),
            ),
        ),
    ];
    seed.sort();
    etcd_put(&endpoints, &seed);
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("kapi.log");
    let args = [
        "--etcd-servers",
        endpoints.as_str(),
        "--service-cluster-ip-range=10.0.0.0/24",
    ];
    let mut server = Server::start_logging(kapi(), &args, &log);
    let logged = plain(&std::fs::read_to_string(&log).unwrap());
    let migrated: Vec<&str> = logged
        .lines()
        .filter(|l| l.contains("migrated, once, to kube-apiserver 1.32's etcd layout"))
        .collect();
    assert_eq!(migrated.len(), 1, "{logged}");
    assert!(migrated[0].contains("moved=5"), "{}", migrated[0]);
    assert!(migrated[0].contains("rewritten=1"), "{}", migrated[0]);

    let dump = etcd_dump(&endpoints);
    for (old, new) in [
        (
            "/registry/apps/deployments/mig/d1",
            "/registry/deployments/mig/d1",
        ),
        (
            "/registry/services/mig/s1",
            "/registry/services/specs/mig/s1",
        ),
        (
            "/registry/services/specs/s2",
            "/registry/services/specs/specs/s2",
        ),
        ("/registry/nodes/n1", "/registry/minions/n1"),
        (
            "/registry/networking.k8s.io/ingresses/mig/i1",
            "/registry/ingress/mig/i1",
        ),
    ] {
        assert!(!dump.contains_key(old), "{old} is still there");
        assert!(dump.contains_key(new), "{new} is missing");
    }
    assert!(dump.contains_key("/registry/kapi.dev/storage-layout"));
    let crd = describe(
        &dump["/registry/apiextensions.k8s.io/customresourcedefinitions/gadgets.example.com"],
    );
    assert_eq!(
        (crd.encoding, crd.api_version.as_str()),
        ("json", "apiextensions.k8s.io/v1beta1")
    );
    // The bitmap rebuilt from the Services in upstream's format.
    let (range, offsets) = read_range(&dump["/registry/ranges/serviceips"]);
    assert_eq!(range, "10.0.0.0/24");
    assert_eq!(offsets, vec![0, 9, 10]);
    assert_eq!(
        server.kubectl_ok(&[
            "get",
            "svc",
            "s2",
            "-n",
            "specs",
            "-o",
            "jsonpath={.spec.clusterIP}"
        ]),
        "10.0.0.11"
    );
    assert_eq!(
        server
            .kubectl_ok(&["get", "ingress", "i1", "-n", "mig", "-o", "name"])
            .trim(),
        "ingress.networking.k8s.io/i1"
    );
    server.kubectl_ok(&["get", "deployment", "d1", "-n", "mig"]);
    server.kubectl_ok(&["get", "node", "n1"]);
    assert_eq!(
        server.kubectl_ok(&[
            "get",
            "crd",
            "gadgets.example.com",
            "-o",
            "jsonpath={.spec.versions[0].schema.openAPIV3Schema.type}"
        ]),
        "object"
    );

    // Once: a restart finds the marker and moves nothing.
    server.terminate();
    let log2 = log_dir.path().join("kapi-2.log");
    let server = Server::start_logging(kapi(), &args, &log2);
    let logged = plain(&std::fs::read_to_string(&log2).unwrap());
    assert!(!logged.contains("etcd layout"), "{logged}");
    server.kubectl_ok(&["get", "deployment", "d1", "-n", "mig"]);
}

#[test]
fn two_replicas_allocate_distinct_service_addresses_from_one_bitmap() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::start(1);
    let endpoints = etcd.endpoints();
    let args = [
        "--etcd-servers",
        endpoints.as_str(),
        "--service-cluster-ip-range=10.0.0.0/27",
    ];
    let a = Server::start_args(kapi(), &args);
    let b = Server::start_args(kapi(), &args);
    // Both replicas at once, from two threads: 24 Services in a range of 30.
    std::thread::scope(|scope| {
        for (server, side) in [(&a, "a"), (&b, "b")] {
            scope.spawn(move || {
                for i in 0..12 {
                    server.kubectl_stdin_ok(
                        &["create", "-f", "-"],
                        &json!({"apiVersion": "v1", "kind": "Service",
                            "metadata": {"name": format!("{side}-{i}"), "namespace": "default"},
                            "spec": {"type": "NodePort", "ports": [{"port": 80}]}})
                        .to_string(),
                    );
                }
            });
        }
    });
    let listed = a.kubectl_ok(&[
        "get",
        "svc",
        "-n",
        "default",
        "-o",
        "jsonpath={range .items[*]}{.spec.clusterIP} {.spec.ports[0].nodePort}{\"\\n\"}{end}",
    ]);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 25, "{listed}");
    let ips: BTreeSet<&str> = lines.iter().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(ips.len(), 25, "an address given twice:\n{listed}");
    let ports: BTreeSet<&str> = lines
        .iter()
        .filter_map(|l| l.split(' ').nth(1))
        .filter(|p| !p.is_empty())
        .collect();
    assert_eq!(ports.len(), 24, "a port given twice:\n{listed}");
    let dump = etcd_dump(&endpoints);
    let (_, offsets) = read_range(&dump["/registry/ranges/serviceips"]);
    let marked: BTreeSet<String> = offsets
        .iter()
        .map(|o| format!("10.0.0.{}", o + 1))
        .collect();
    assert_eq!(
        marked,
        ips.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>()
    );
}

/// Events live `--event-ttl` after their last write, as kube-apiserver
/// writes them: on etcd under a lease (which kube-apiserver, sharing the
/// etcd, sees the same), on the embedded store by its own expiry. A watch
/// sees them go.
#[test]
fn events_expire_after_the_event_ttl() {
    let event = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": "Tested", "message": "expires", "type": "Normal"})
        .to_string()
    };
    let gone = |server: &Server, name: &str| {
        let deadline = Instant::now() + Duration::from_secs(20);
        while server
            .kubectl(&["get", "event", name, "-n", "default"])
            .status
            .success()
        {
            assert!(Instant::now() < deadline, "{name} still there");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let embedded = Server::start_args(kapi(), &["--event-ttl=2s"]);
    embedded.kubectl_stdin_ok(&["create", "-f", "-"], &event("e1"));
    embedded.kubectl_stdin_ok(
        &["create", "-f", "-"],
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "stays", "namespace": "default"}})
        .to_string(),
    );
    gone(&embedded, "e1");
    embedded.kubectl_ok(&["get", "configmap", "stays", "-n", "default"]);

    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::start(1);
    let endpoints = etcd.endpoints();
    let server = Server::start_args(kapi(), &["--etcd-servers", &endpoints, "--event-ttl=2s"]);
    server.kubectl_stdin_ok(&["create", "-f", "-"], &event("e2"));
    // The key is attached to a lease (etcd's JSON gateway shows it).
    let address: std::net::SocketAddr = endpoints.trim_start_matches("http://").parse().unwrap();
    let range = json!({"key": STANDARD.encode("/registry/events/default/e2")}).to_string();
    let (code, body) =
        kapi_test_support::http_request(address, "POST", "/v3/kv/range", Some(&range)).unwrap();
    assert_eq!(code, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    let lease = answer["kvs"][0]["lease"].as_str().unwrap_or("0");
    assert_ne!(lease, "0", "{body}");
    gone(&server, "e2");
}

/// The `kubernetes` Service's endpoints as kube-apiserver's lease
/// reconciler keeps them: each replica holds `/registry/masterleases/<ip>`
/// (a v1 Endpoints under an etcd lease) and Endpoints `default/kubernetes`
/// (left alone by the mirroring) and its EndpointSlice list every live one;
/// a replica that stops takes itself out. (The addresses are only written
/// into objects: nothing connects to them.)
#[test]
fn replicas_keep_the_kubernetes_services_endpoints_by_lease() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::start(1);
    let endpoints = etcd.endpoints();
    let a = Server::start_args(
        kapi(),
        &[
            "--etcd-servers",
            &endpoints,
            "--advertise-address=10.254.200.1",
        ],
    );
    let mut b = Server::start_args(
        kapi(),
        &[
            "--etcd-servers",
            &endpoints,
            "--advertise-address=10.254.200.2",
        ],
    );
    let ips = |server: &Server, kind: &str| -> String {
        let path = if kind == "endpoints" {
            "jsonpath={.subsets[0].addresses[*].ip}"
        } else {
            "jsonpath={.endpoints[*].addresses[0]}"
        };
        let out = server.kubectl(&["get", kind, "kubernetes", "-n", "default", "-o", path]);
        kapi_test_support::text(&out.stdout)
    };
    let wait_for = |server: &Server, kind: &str, expected: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while ips(server, kind) != expected {
            assert!(
                Instant::now() < deadline,
                "{kind}: {:?}, not {expected:?}",
                ips(server, kind)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    wait_for(&a, "endpoints", "10.254.200.1 10.254.200.2");
    wait_for(&a, "endpointslices", "10.254.200.1 10.254.200.2");
    assert_eq!(
        a.kubectl_ok(&[
            "get",
            "endpoints",
            "kubernetes",
            "-n",
            "default",
            "-o",
            "jsonpath={.metadata.labels.endpointslice\\.kubernetes\\.io/skip-mirror}"
        ]),
        "true"
    );
    let dump = etcd_dump(&endpoints);
    let lease = describe(&dump["/registry/masterleases/10.254.200.2"]);
    assert_eq!(
        (
            lease.encoding,
            lease.api_version.as_str(),
            lease.kind.as_str()
        ),
        ("protobuf", "v1", "Endpoints")
    );
    b.terminate();
    wait_for(&a, "endpoints", "10.254.200.1");
    wait_for(&a, "endpointslices", "10.254.200.1");
    assert!(!etcd_dump(&endpoints).contains_key("/registry/masterleases/10.254.200.2"));
}

/// The identity lease kube-apiserver 1.32 keeps (and other tools count API
/// servers by): `kube-system/apiserver-<base32 of the host name's
/// SHA-256>`, labelled as kube-apiserver's, held for an hour.
#[test]
fn the_server_holds_kube_apiservers_identity_lease() {
    let server = Server::start(kapi());
    let expected = std::process::Command::new("python3")
        .args([
            "-c",
            "import base64,hashlib,socket;\
             print('apiserver-'+base64.b32encode(hashlib.sha256(socket.gethostname().encode()).digest()[:16]).decode().rstrip('=').lower())",
        ])
        .output()
        .unwrap();
    let expected = kapi_test_support::text(&expected.stdout).trim().to_owned();
    let deadline = Instant::now() + Duration::from_secs(20);
    let lease: Value = loop {
        let out = server.kubectl(&["get", "lease", &expected, "-n", "kube-system", "-o", "json"]);
        if out.status.success() {
            break serde_json::from_slice(&out.stdout).unwrap();
        }
        assert!(Instant::now() < deadline, "no lease {expected}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        lease["metadata"]["labels"]["apiserver.kubernetes.io/identity"],
        "kube-apiserver"
    );
    assert!(lease["metadata"]["labels"]["kubernetes.io/hostname"].is_string());
    assert_eq!(lease["spec"]["leaseDurationSeconds"], 3600);
    let holder = lease["spec"]["holderIdentity"].as_str().unwrap();
    assert!(holder.starts_with(&format!("{expected}_")), "{holder}");
}
