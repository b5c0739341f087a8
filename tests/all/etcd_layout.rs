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
use kapi_runtime::proto::wire::{Reader, put_bytes};
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
                        encoding: if encoding == "json" { "json" } else { "protobuf" },
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
            while !server
                .kubectl(&["get", "widgets", "-A"])
                .status
                .success()
            {
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
            encoding: if cols[1] == "json" { "json" } else { "protobuf" },
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
            wrong.push(format!("{key}: a {kind} under {prefix:?}, a prefix upstream does not use"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
