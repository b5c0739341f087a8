//! A small cluster on kapi, run by stand-ins for kube-controller-manager and
//! kube-scheduler (`stand_ins.rs`: the requests their controllers make, as
//! their own users) and a stand-in kubelet per node, with kapi's built-in
//! namespace, service account, root CA, garbage collector and aggregation
//! controllers: two Nodes kept Ready, Deployments that become ReplicaSets
//! and scheduled Pods, scaling, cascading deletion in the three policies, a
//! Job, a CronJob, an EndpointSlice, a namespace emptied and removed, leader
//! Leases, a legacy token Secret filled as kube-controller-manager's token
//! controller fills it, and no request of the stand-ins failed. The
//! components' identities are the ones kapi made for them: the kubeconfigs
//! `controller-manager.conf` and `scheduler.conf`, the controllers' service
//! account tokens, the kubelets as `system:node:<name>` under the Node
//! authorizer and NodeRestriction.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kapi_test_support::{Server, http_request_as, http_request_with};
use serde_json::{Value, json};

use crate::rbac::kubectl;
use crate::stand_ins::ControlPlane;

const NODES: [&str; 2] = ["node-a", "node-b"];
const MERGE_PATCH: &str = "application/merge-patch+json";

#[test]
fn stand_in_control_plane_runs_a_cluster_on_kapi() {
    let server = Server::start_args(Path::new(env!("CARGO_BIN_EXE_kapi")), &["--controllers=*"]);
    let api = Api(server.address);
    // The components' kubeconfigs name them.
    for (file, user) in [
        ("controller-manager.conf", "system:kube-controller-manager"),
        ("scheduler.conf", "system:kube-scheduler"),
    ] {
        let (ok, out, err) = kubectl(
            &server.data_dir().join(file),
            &[
                "auth",
                "whoami",
                "-o",
                "jsonpath={.status.userInfo.username}",
            ],
            None,
        );
        assert!(ok, "{file}: {err}");
        assert_eq!(out, user, "{file}");
    }
    let kubelet = Kubelet::start(server.address);
    let plane = ControlPlane::start(server.address, server.data_dir(), &NODES);

    // A CronJob first: its Job is checked last.
    server.kubectl_ok(&[
        "create",
        "cronjob",
        "tick",
        "--image=busybox",
        "--schedule=* * * * *",
        "-n",
        "default",
    ]);

    // The kubernetes Service has the range's first address.
    let (code, kubernetes) = api.get("/api/v1/namespaces/default/services/kubernetes");
    assert_eq!(code, 200, "{kubernetes}");
    assert_eq!(kubernetes["spec"]["clusterIPs"], json!(["10.96.0.1"]));

    // A new namespace gets its default ServiceAccount and the root CA.
    server.kubectl_ok(&["create", "namespace", "team"]);
    wait_for("the default ServiceAccount in team", 60, || {
        api.get("/api/v1/namespaces/team/serviceaccounts/default").0 == 200
    });
    wait_for("kube-root-ca.crt in team", 60, || {
        let (code, cm) = api.get("/api/v1/namespaces/team/configmaps/kube-root-ca.crt");
        code == 200
            && cm["data"]["ca.crt"]
                .as_str()
                .is_some_and(|c| c.contains("BEGIN CERTIFICATE"))
    });

    // A legacy token Secret, filled as kube-controller-manager's token
    // controller fills it (signed with sa.key, the key kapi wrote for it):
    // the token authenticates on kapi as the service account.
    legacy_token_authenticates(&server);
    // A Deployment of 3: a ReplicaSet, 3 Pods bound to the Nodes, status filled.
    server.kubectl_ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=3",
        "-n",
        "team",
    ]);
    wait_ready(&api, "team", "web", 3);
    let (_, rs) = api.get("/apis/apps/v1/namespaces/team/replicasets?labelSelector=app%3Dweb");
    assert_eq!(rs["items"].as_array().unwrap().len(), 1, "{rs}");
    assert_eq!(
        rs["items"][0]["metadata"]["ownerReferences"][0]["kind"],
        "Deployment"
    );
    for pod in pods(&api, "team", "app=web") {
        let node = pod["spec"]["nodeName"].as_str().unwrap_or_default();
        assert!(NODES.contains(&node), "pod not bound to a node: {pod}");
    }
    wait_for("Scheduled events for the pods", 30, || {
        let (_, events) =
            api.get("/api/v1/namespaces/team/events?fieldSelector=reason%3DScheduled");
        events["items"].as_array().map_or(0, Vec::len) >= 3
    });
    let (_, deployment) = api.get("/apis/apps/v1/namespaces/team/deployments/web");
    let status = &deployment["status"];
    assert_eq!(status["replicas"], 3, "{status}");
    assert_eq!(status["updatedReplicas"], 3, "{status}");
    assert_eq!(status["availableReplicas"], 3, "{status}");
    assert_eq!(
        status["observedGeneration"],
        deployment["metadata"]["generation"]
    );
    let conditions: Vec<&str> = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["type"].as_str())
        .collect();
    assert!(conditions.contains(&"Available") && conditions.contains(&"Progressing"));

    // A Service in front of them: its EndpointSlice lists the ready Pods.
    server.kubectl_ok(&["expose", "deployment", "web", "--port=80", "-n", "team"]);
    wait_for("web's EndpointSlice with 3 endpoints", 60, || {
        let (_, slices) = api.get(
            "/apis/discovery.k8s.io/v1/namespaces/team/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb",
        );
        slices["items"][0]["endpoints"]
            .as_array()
            .map_or(0, Vec::len)
            == 3
    });

    // Scaling up and down.
    server.kubectl_ok(&["scale", "deployment", "web", "--replicas=5", "-n", "team"]);
    wait_ready(&api, "team", "web", 5);
    server.kubectl_ok(&["scale", "deployment", "web", "--replicas=2", "-n", "team"]);
    wait_ready(&api, "team", "web", 2);
    wait_for("2 pods left after scaling down", 60, || {
        pods(&api, "team", "app=web").len() == 2
    });

    // Background deletion (kubectl's default) takes the ReplicaSet and Pods.
    server.kubectl_ok(&["delete", "deployment", "web", "-n", "team"]);
    wait_for("web's ReplicaSet and Pods deleted", 60, || {
        replica_sets(&api, "team", "app=web").is_empty() && pods(&api, "team", "app=web").is_empty()
    });

    // Foreground: the Deployment waits for its dependents.
    server.kubectl_ok(&[
        "create",
        "deployment",
        "front",
        "--image=nginx",
        "--replicas=2",
        "-n",
        "team",
    ]);
    wait_ready(&api, "team", "front", 2);
    server.kubectl_ok(&[
        "delete",
        "deployment",
        "front",
        "-n",
        "team",
        "--cascade=foreground",
        "--wait=false",
    ]);
    let (code, front) = api.get("/apis/apps/v1/namespaces/team/deployments/front");
    if code == 200 {
        assert!(
            front["metadata"]["finalizers"]
                .as_array()
                .is_some_and(|f| f.iter().any(|f| f == "foregroundDeletion")),
            "{front}"
        );
    }
    wait_for("front, its ReplicaSet and Pods deleted", 90, || {
        api.get("/apis/apps/v1/namespaces/team/deployments/front").0 == 404
            && replica_sets(&api, "team", "app=front").is_empty()
            && pods(&api, "team", "app=front").is_empty()
    });

    // Orphan: the ReplicaSet and Pods stay, without the owner.
    server.kubectl_ok(&[
        "create",
        "deployment",
        "keep",
        "--image=nginx",
        "--replicas=2",
        "-n",
        "team",
    ]);
    wait_ready(&api, "team", "keep", 2);
    server.kubectl_ok(&[
        "delete",
        "deployment",
        "keep",
        "-n",
        "team",
        "--cascade=orphan",
    ]);
    wait_for("keep's ReplicaSet orphaned", 60, || {
        let sets = replica_sets(&api, "team", "app=keep");
        sets.len() == 1 && sets[0]["metadata"]["ownerReferences"].is_null()
    });
    assert_eq!(
        api.get("/apis/apps/v1/namespaces/team/deployments/keep").0,
        404
    );
    assert_eq!(pods(&api, "team", "app=keep").len(), 2);

    // A Job runs its Pod to completion.
    server.kubectl_ok(&["create", "job", "once", "--image=busybox", "-n", "team"]);
    wait_for("the Job to complete", 60, || {
        let (_, job) = api.get("/apis/batch/v1/namespaces/team/jobs/once");
        job["status"]["succeeded"] == 1
            && job["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "Complete" && c["status"] == "True")
            })
    });

    // The CronJob made a Job.
    wait_for("a Job of the CronJob", 120, || {
        let (_, jobs) = api.get("/apis/batch/v1/namespaces/default/jobs");
        jobs["items"].as_array().is_some_and(|jobs| {
            jobs.iter()
                .any(|j| j["metadata"]["ownerReferences"][0]["name"] == "tick")
        })
    });

    // Deleting the namespace empties and removes it.
    server.kubectl_ok(&["delete", "namespace", "team", "--wait=false"]);
    wait_for("namespace team removed", 120, || {
        api.get("/api/v1/namespaces/team").0 == 404
    });

    // Both components hold their leader Leases, and kapi its own.
    for lease in [
        "kube-controller-manager",
        "kube-scheduler",
        "kapi-controller-manager",
    ] {
        let (code, lease_object) = api.get(&format!(
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{lease}"
        ));
        assert_eq!(code, 200, "lease {lease}: {lease_object}");
        assert!(
            lease_object["spec"]["holderIdentity"]
                .as_str()
                .is_some_and(|h| !h.is_empty()),
            "{lease_object}"
        );
        assert!(
            lease_object["spec"]["renewTime"].is_string(),
            "{lease_object}"
        );
    }

    // No request of the stand-ins failed.
    let failures = plane.failures();
    drop(plane);
    drop(kubelet);
    assert!(
        failures.is_empty(),
        "kapi failed requests of the stand-in components:\n{}",
        failures.join("\n")
    );
}

/// What kube-controller-manager's token controller does to a new
/// `kubernetes.io/service-account-token` Secret (with
/// `--service-account-private-key-file`, kapi's `sa.key`): a legacy token of
/// the service account signed with that key, the CA and the namespace in
/// its data, the account's uid in its annotations; written as
/// kube-controller-manager. Answers the token.
fn fill_legacy_token(server: &Server, namespace: &str, name: &str) -> String {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    let api = Api(server.address);
    let path = format!("/api/v1/namespaces/{namespace}/secrets/{name}");
    let (code, mut secret) = api.get(&path);
    assert_eq!(code, 200, "{secret}");
    let account = secret["metadata"]["annotations"]["kubernetes.io/service-account.name"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, sa) = api.get(&format!(
        "/api/v1/namespaces/{namespace}/serviceaccounts/{account}"
    ));
    assert_eq!(code, 200, "{sa}");
    let uid = sa["metadata"]["uid"].as_str().unwrap().to_owned();
    let key = std::fs::read(server.data_dir().join("sa.key")).unwrap();
    let signer = kapi_server::authn::service_account::key::signer_from_pem(&key).unwrap();
    let token = signer
        .sign(&json!({"iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": namespace,
            "kubernetes.io/serviceaccount/secret.name": name,
            "kubernetes.io/serviceaccount/service-account.name": account,
            "kubernetes.io/serviceaccount/service-account.uid": uid,
            "sub": format!("system:serviceaccount:{namespace}:{account}")}))
        .unwrap();
    let ca = std::fs::read(server.data_dir().join("ca.crt")).unwrap();
    secret["metadata"]["annotations"]["kubernetes.io/service-account.uid"] = json!(uid);
    secret["data"] = json!({"token": STANDARD.encode(&token), "ca.crt": STANDARD.encode(ca),
        "namespace": STANDARD.encode(namespace)});
    let body = secret.to_string();
    let headers = [
        ("Impersonate-User", "system:kube-controller-manager"),
        ("Impersonate-Group", "system:authenticated"),
    ];
    let answer = http_request_with(
        server.address,
        "PUT",
        &path,
        "application/json",
        &headers,
        Some(&body),
    );
    assert!(
        answer.as_ref().is_some_and(|(code, _)| *code == 200),
        "{answer:?}"
    );
    token
}

/// A `kubernetes.io/service-account-token` Secret for `team/default`,
/// filled as kube-controller-manager's token controller fills it, whose
/// token kapi takes for the service account.
fn legacy_token_authenticates(server: &Server) {
    let secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "legacy", "namespace": "team",
            "annotations": {"kubernetes.io/service-account.name": "default"}},
        "type": "kubernetes.io/service-account-token"});
    server.kubectl_stdin_ok(&["create", "-f", "-"], &secret.to_string());
    let token = fill_legacy_token(server, "team", "legacy");
    // The token alone (the test client would present the admin's
    // certificate).
    let out = Command::new("curl")
        .args(["-sS", "-k", "--max-time", "20", "-H"])
        .arg(format!("Authorization: Bearer {token}"))
        .args(["-H", "Content-Type: application/json", "-d"])
        .arg(r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#)
        .arg(format!(
            "{}/apis/authentication.k8s.io/v1/selfsubjectreviews",
            server.url()
        ))
        .output()
        .expect("curl runs");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(
        answer["status"]["userInfo"]["username"],
        "system:serviceaccount:team:default"
    );
}

/// Waits until `done` (polled every 250 ms) or fails after `seconds`.
fn wait_for(what: &str, seconds: u64, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < deadline {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    panic!("timed out after {seconds} s waiting for {what}");
}

/// Waits until Deployment `name` reports `replicas` available and up to date.
fn wait_ready(api: &Api, namespace: &str, name: &str, replicas: i64) {
    wait_for(
        &format!("{namespace}/{name} with {replicas} available"),
        90,
        || {
            let (_, d) = api.get(&format!(
                "/apis/apps/v1/namespaces/{namespace}/deployments/{name}"
            ));
            let s = &d["status"];
            s["observedGeneration"] == d["metadata"]["generation"]
                && s["replicas"] == replicas
                && s["updatedReplicas"] == replicas
                && s["availableReplicas"] == replicas
        },
    );
}

/// The Pods matching `selector` that are not being deleted.
fn pods(api: &Api, namespace: &str, selector: &str) -> Vec<Value> {
    let (_, list) = api.get(&format!(
        "/api/v1/namespaces/{namespace}/pods?labelSelector={}",
        selector.replace('=', "%3D")
    ));
    list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

fn replica_sets(api: &Api, namespace: &str, selector: &str) -> Vec<Value> {
    let (_, list) = api.get(&format!(
        "/apis/apps/v1/namespaces/{namespace}/replicasets?labelSelector={}",
        selector.replace('=', "%3D")
    ));
    list["items"].as_array().cloned().unwrap_or_default()
}

/// JSON requests to the server.
#[derive(Clone, Copy)]
struct Api(std::net::SocketAddr);

/// Requests as one node's kubelet (`system:node:<name>` in `system:nodes`,
/// impersonated by the admin), so the Node authorizer and NodeRestriction
/// judge them as they judge a real kubelet's.
struct NodeApi {
    address: std::net::SocketAddr,
    user: String,
}

impl NodeApi {
    fn new(address: std::net::SocketAddr, node: &str) -> NodeApi {
        NodeApi {
            address,
            user: format!("system:node:{node}"),
        }
    }

    fn get(&self, path: &str) -> (u16, Value) {
        self.send("GET", path, "application/json", None)
    }

    fn send(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let body = body.map(Value::to_string);
        let headers = [
            ("Impersonate-User", self.user.as_str()),
            ("Impersonate-Group", "system:nodes"),
        ];
        let answer = http_request_with(
            self.address,
            method,
            path,
            content_type,
            &headers,
            body.as_deref(),
        );
        match answer {
            Some((code, text)) => (code, serde_json::from_str(&text).unwrap_or(Value::Null)),
            None => (0, Value::Null),
        }
    }
}

impl Api {
    fn get(&self, path: &str) -> (u16, Value) {
        self.send("GET", path, "application/json", None)
    }

    fn send(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let body = body.map(Value::to_string);
        match http_request_as(self.0, method, path, content_type, body.as_deref()) {
            Some((code, text)) => (code, serde_json::from_str(&text).unwrap_or(Value::Null)),
            None => (0, Value::Null),
        }
    }
}

/// What the kubelets of [`NODES`] would do for the control plane: register
/// the Nodes, renew their Leases and Ready heartbeats, start the Pods bound to
/// them (Job pods run to completion) and confirm the deletion of their Pods.
struct Kubelet {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Kubelet {
    fn start(address: std::net::SocketAddr) -> Kubelet {
        let kubelets: Vec<(&str, NodeApi)> = NODES
            .iter()
            .map(|node| (*node, NodeApi::new(address, node)))
            .collect();
        for (node, api) in &kubelets {
            let body = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node,
                "labels": {"kubernetes.io/hostname": node, "kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64"}}});
            let (code, v) = api.send("POST", "/api/v1/nodes", "application/json", Some(&body));
            assert_eq!(code, 201, "{v}");
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let started = now();
        let thread = std::thread::spawn(move || {
            let mut tick = 0u64;
            while !flag.load(Ordering::Relaxed) {
                for (node, api) in &kubelets {
                    renew_lease(api, node);
                    if tick.is_multiple_of(5) {
                        heartbeat(api, node, &started);
                    }
                    run_pods(api, node);
                }
                tick += 1;
                std::thread::sleep(Duration::from_millis(500));
            }
        });
        for node in NODES {
            heartbeat(&NodeApi::new(address, node), node, &started);
        }
        Kubelet {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Kubelet {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn now() -> jiff::Timestamp {
    jiff::Timestamp::now()
}

fn seconds(t: &jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn micros(t: &jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()
}

fn renew_lease(api: &NodeApi, node: &str) {
    let path = format!("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{node}");
    let spec = json!({"holderIdentity": node, "leaseDurationSeconds": 40,
        "renewTime": micros(&now())});
    let (code, _) = api.send("PATCH", &path, MERGE_PATCH, Some(&json!({"spec": spec})));
    if code == 404 {
        let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": node, "namespace": "kube-node-lease"}, "spec": spec});
        api.send(
            "POST",
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
            "application/json",
            Some(&lease),
        );
    }
}

fn heartbeat(api: &NodeApi, node: &str, started: &jiff::Timestamp) {
    let resources = json!({"cpu": "8", "memory": "16Gi", "pods": "110"});
    let condition = |type_: &str, status: &str, reason: &str| {
        json!({"type": type_, "status": status, "reason": reason, "message": reason,
            "lastHeartbeatTime": seconds(&now()), "lastTransitionTime": seconds(started)})
    };
    let status = json!({"status": {
        "capacity": resources, "allocatable": resources,
        "conditions": [
            condition("MemoryPressure", "False", "KubeletHasSufficientMemory"),
            condition("DiskPressure", "False", "KubeletHasNoDiskPressure"),
            condition("PIDPressure", "False", "KubeletHasSufficientPID"),
            condition("Ready", "True", "KubeletReady"),
        ],
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"},
            {"type": "Hostname", "address": node}],
        "nodeInfo": {"machineID": node, "systemUUID": node, "bootID": node,
            "kernelVersion": "6.1.0", "osImage": "kapi test", "containerRuntimeVersion": "fake://1",
            "kubeletVersion": "v1.32.13", "kubeProxyVersion": "", "operatingSystem": "linux",
            "architecture": "amd64"}}});
    api.send(
        "PATCH",
        &format!("/api/v1/nodes/{node}/status"),
        MERGE_PATCH,
        Some(&status),
    );
}

/// A pod's address in 10.244.0.0/16, from its uid (distinct enough for the
/// few pods of a test).
fn pod_ip(uid: &str) -> String {
    let hash = uid
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    format!("10.244.{}.{}", (hash >> 8) % 256, hash % 254 + 1)
}

/// Starts the Pods bound to `node` (a Job's run to completion) and confirms
/// the deletion of those being deleted, as its kubelet: it may list only
/// its own pods.
fn run_pods(api: &NodeApi, node: &str) {
    let (code, list) = api.get(&format!(
        "/api/v1/pods?fieldSelector=spec.nodeName%3D{node}"
    ));
    assert_eq!(code, 200, "{list}");
    for pod in list["items"].as_array().into_iter().flatten() {
        let meta = &pod["metadata"];
        let (ns, name) = (
            meta["namespace"].as_str().unwrap_or_default(),
            meta["name"].as_str().unwrap_or_default(),
        );
        let path = format!("/api/v1/namespaces/{ns}/pods/{name}");
        if !meta["deletionTimestamp"].is_null() {
            let options = json!({"kind": "DeleteOptions", "apiVersion": "v1",
                "gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}});
            api.send("DELETE", &path, "application/json", Some(&options));
            continue;
        }
        if pod["status"]["phase"] != "Pending" {
            continue;
        }
        let job = meta["labels"]["batch.kubernetes.io/job-name"].is_string();
        let at = seconds(&now());
        let containers = pod["spec"]["containers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let statuses: Vec<Value> = containers
            .iter()
            .map(|c| {
                let state = if job {
                    json!({"terminated": {"exitCode": 0, "reason": "Completed",
                        "startedAt": at, "finishedAt": at}})
                } else {
                    json!({"running": {"startedAt": at}})
                };
                json!({"name": c["name"], "image": c["image"], "imageID": "", "ready": !job,
                    "started": !job, "restartCount": 0, "state": state})
            })
            .collect();
        let ready = if job { "False" } else { "True" };
        let condition = |type_: &str, status: &str| json!({"type": type_, "status": status, "lastProbeTime": null, "lastTransitionTime": at});
        // A pod network address of its own, as a network plugin gives: an
        // EndpointSlice may not hold loopback addresses (upstream refuses them).
        let pod_ip = pod_ip(meta["uid"].as_str().unwrap_or_default());
        let status = json!({"status": {
            "phase": if job { "Succeeded" } else { "Running" },
            "hostIP": "127.0.0.1", "hostIPs": [{"ip": "127.0.0.1"}],
            "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
            "startTime": at,
            "conditions": [condition("PodReadyToStartContainers", "True"),
                condition("Initialized", "True"), condition("Ready", ready),
                condition("ContainersReady", ready), condition("PodScheduled", "True")],
            "containerStatuses": statuses}});
        api.send(
            "PATCH",
            &format!("{path}/status"),
            MERGE_PATCH,
            Some(&status),
        );
    }
}
