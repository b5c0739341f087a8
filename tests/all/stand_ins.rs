//! Stand-ins for the parts of kube-controller-manager and kube-scheduler that
//! kapi leaves to them: each does, through the API and as its own user, the
//! requests the real controller makes (read from kubernetes 1.32's
//! `pkg/controller/{deployment,replicaset,job,cronjob,endpointslice}` and the
//! scheduler's binder and event recorder), in a polling loop instead of
//! informers. What they make is what kapi must take: owner references with
//! `blockOwnerDeletion` (checked against the controller's RBAC), generated
//! names, status updates with resource versions, bindings, events.k8s.io
//! events, leader Leases. Every answer that is neither a success nor a
//! conflict or a not-found a real controller retries on is kept as a failure,
//! and the test fails on any (what the real components' logs were read for).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use kapi_test_support::http_exchange;
use serde_json::{Value, json};

use crate::rbac::kubectl;

/// An API client with one identity: a bearer token, or the admin's
/// certificate impersonating a user and groups.
#[derive(Clone)]
pub struct Client {
    address: SocketAddr,
    headers: Vec<(String, String)>,
    failures: Arc<Mutex<Vec<String>>>,
}

impl Client {
    /// The admin impersonating `user` in `groups`.
    pub fn impersonating(
        address: SocketAddr,
        user: &str,
        groups: &[&str],
        failures: &Arc<Mutex<Vec<String>>>,
    ) -> Client {
        let mut headers = vec![("Impersonate-User".to_owned(), user.to_owned())];
        for group in groups {
            headers.push(("Impersonate-Group".to_owned(), (*group).to_owned()));
        }
        Client {
            address,
            headers,
            failures: failures.clone(),
        }
    }

    fn bearer(address: SocketAddr, token: &str, failures: &Arc<Mutex<Vec<String>>>) -> Client {
        Client {
            address,
            headers: vec![("Authorization".to_owned(), format!("Bearer {token}"))],
            failures: failures.clone(),
        }
    }

    pub fn get(&self, path: &str) -> (u16, Value) {
        self.send("GET", path, None)
    }

    /// One JSON request; an answer other than 2xx, 404 or 409 is a failure,
    /// but for a create refused in a terminating namespace, which the real
    /// controllers expect and drop (controller_utils' `NamespaceTerminating`
    /// cause).
    pub fn send(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let body = body.map(Value::to_string).unwrap_or_default();
        let content_type = if method == "PATCH" {
            "application/merge-patch+json"
        } else {
            "application/json"
        };
        let mut headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        headers.push(("Content-Type", content_type));
        headers.push(("Accept", "application/json"));
        let answer = http_exchange(self.address, method, path, &headers, body.as_bytes());
        let (code, value) = match answer {
            Some(a) => (a.code, serde_json::from_str(&a.body).unwrap_or(Value::Null)),
            None => (0, Value::Null),
        };
        let terminating = value["details"]["causes"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["reason"] == "NamespaceTerminating"));
        if !(200..300).contains(&code) && code != 404 && code != 409 && !terminating {
            let who = &self.headers[0].1;
            let who = if who.starts_with("Bearer") {
                "token"
            } else {
                who
            };
            self.failures
                .lock()
                .unwrap()
                .push(format!("{who}: {method} {path}: {code} {value}"));
        }
        (code, value)
    }
}

/// A controller's own client, as kube-controller-manager makes them with
/// `--use-service-account-credentials`: as itself (controller-manager.conf)
/// it creates the controller's service account in kube-system and asks a
/// token for it (TokenRequest).
fn controller_client(
    address: SocketAddr,
    data_dir: &Path,
    name: &str,
    failures: &Arc<Mutex<Vec<String>>>,
) -> Client {
    let kubeconfig = data_dir.join("controller-manager.conf");
    let _ = kubectl(
        &kubeconfig,
        &["-n", "kube-system", "create", "serviceaccount", name],
        None,
    );
    let (ok, token, err) = kubectl(
        &kubeconfig,
        &["-n", "kube-system", "create", "token", name],
        None,
    );
    assert!(ok, "a token for {name}: {err}");
    Client::bearer(address, token.trim(), failures)
}

/// The stand-in controllers and scheduler, run on a thread until dropped.
pub struct ControlPlane {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    failures: Arc<Mutex<Vec<String>>>,
}

struct Controllers {
    manager: Client,
    scheduler: Client,
    deployments: Client,
    replica_sets: Client,
    jobs: Client,
    cron_jobs: Client,
    endpoint_slices: Client,
    nodes: Vec<String>,
}

impl ControlPlane {
    pub fn start(address: SocketAddr, data_dir: &Path, nodes: &[&str]) -> ControlPlane {
        let failures = Arc::new(Mutex::new(Vec::new()));
        let controller = |name: &str| controller_client(address, data_dir, name, &failures);
        let c = Controllers {
            manager: Client::impersonating(
                address,
                "system:kube-controller-manager",
                &["system:authenticated"],
                &failures,
            ),
            scheduler: Client::impersonating(
                address,
                "system:kube-scheduler",
                &["system:authenticated"],
                &failures,
            ),
            deployments: controller("deployment-controller"),
            replica_sets: controller("replicaset-controller"),
            jobs: controller("job-controller"),
            cron_jobs: controller("cronjob-controller"),
            endpoint_slices: controller("endpointslice-controller"),
            nodes: nodes.iter().map(|n| (*n).to_owned()).collect(),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut tick = 0u64;
            while !flag.load(Ordering::Relaxed) {
                if tick.is_multiple_of(8) {
                    renew_lease(&c.manager, "kube-controller-manager");
                    renew_lease(&c.scheduler, "kube-scheduler");
                }
                sync_deployments(&c.deployments);
                sync_replica_sets(&c.replica_sets);
                schedule(&c.scheduler, &c.nodes, tick);
                sync_jobs(&c.jobs);
                sync_cron_jobs(&c.cron_jobs);
                sync_endpoint_slices(&c.endpoint_slices);
                tick += 1;
                std::thread::sleep(Duration::from_millis(250));
            }
        });
        ControlPlane {
            stop,
            thread: Some(thread),
            failures,
        }
    }

    /// The requests kapi failed.
    pub fn failures(&self) -> Vec<String> {
        self.failures.lock().unwrap().clone()
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

fn live(object: &Value) -> bool {
    object["metadata"]["deletionTimestamp"].is_null()
}

/// Whether `object` is controlled by the object of `uid`.
fn controlled_by(object: &Value, uid: &Value) -> bool {
    object["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| {
            refs.iter()
                .any(|r| r["uid"] == *uid && r["controller"] == true)
        })
}

/// The owner reference a controller sets on what it makes.
fn owner(api_version: &str, kind: &str, object: &Value) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "name": object["metadata"]["name"],
        "uid": object["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true})
}

fn selector(match_labels: &Value) -> String {
    let pairs: Vec<String> = match_labels
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}%3D{}", v.as_str().unwrap_or_default()))
        .collect();
    pairs.join(",").replace('/', "%2F")
}

fn now_seconds() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"].as_array().is_some_and(|c| {
        c.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

/// leaderelection's LeaseLock: create the Lease, then renew it.
fn renew_lease(client: &Client, name: &str) {
    let path = format!("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{name}");
    let micros = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S.%6fZ")
        .to_string();
    let (code, mut lease) = client.get(&path);
    if code == 404 {
        let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {"holderIdentity": format!("{name}-stand-in"), "leaseDurationSeconds": 15,
                "acquireTime": micros, "renewTime": micros, "leaseTransitions": 0}});
        client.send(
            "POST",
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
            Some(&lease),
        );
    } else if code == 200 {
        lease["spec"]["renewTime"] = json!(micros);
        client.send("PUT", &path, Some(&lease));
    }
}

/// The pod template's hash, as the `pod-template-hash` label.
fn template_hash(template: &Value) -> String {
    let hash = template.to_string().bytes().fold(2_166_136_261u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(16_777_619)
    });
    format!("{:x}", hash % 0xff_ffff)
}

/// The deployment controller: one ReplicaSet per Deployment at its replicas
/// (the rollout of one template), the Deployment's status from it.
fn sync_deployments(client: &Client) {
    let (_, list) = client.get("/apis/apps/v1/deployments");
    for d in items(&list).iter().filter(|d| live(d)) {
        let ns = d["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = d["metadata"]["name"].as_str().unwrap_or_default();
        let (_, sets) = client.get(&format!("/apis/apps/v1/namespaces/{ns}/replicasets"));
        let uid = &d["metadata"]["uid"];
        let replicas = d["spec"]["replicas"].clone();
        let owned = items(&sets).into_iter().find(|rs| controlled_by(rs, uid));
        let Some(mut rs) = owned else {
            let hash = template_hash(&d["spec"]["template"]);
            let mut template = d["spec"]["template"].clone();
            template["metadata"]["labels"]["pod-template-hash"] = json!(hash);
            let mut match_labels = d["spec"]["selector"]["matchLabels"].clone();
            match_labels["pod-template-hash"] = json!(hash);
            let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": format!("{name}-{hash}"), "namespace": ns,
                    "labels": template["metadata"]["labels"],
                    "annotations": {"deployment.kubernetes.io/revision": "1"},
                    "ownerReferences": [owner("apps/v1", "Deployment", d)]},
                "spec": {"replicas": replicas, "selector": {"matchLabels": match_labels},
                    "template": template}});
            client.send(
                "POST",
                &format!("/apis/apps/v1/namespaces/{ns}/replicasets"),
                Some(&rs),
            );
            continue;
        };
        let rs_name = rs["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if rs["spec"]["replicas"] != replicas {
            rs["spec"]["replicas"] = replicas.clone();
            let path = format!("/apis/apps/v1/namespaces/{ns}/replicasets/{rs_name}");
            client.send("PUT", &path, Some(&rs));
            continue;
        }
        let s = &rs["status"];
        let want = replicas.as_i64().unwrap_or(1);
        let available = s["availableReplicas"].as_i64().unwrap_or(0);
        let at = now_seconds();
        let condition = |type_: &str, status: bool, reason: &str| {
            json!({"type": type_, "status": if status {"True"} else {"False"}, "reason": reason,
                "message": reason, "lastUpdateTime": at, "lastTransitionTime": at})
        };
        let status = json!({
        "observedGeneration": d["metadata"]["generation"],
        "replicas": s["replicas"].as_i64().unwrap_or(0),
        "updatedReplicas": s["replicas"].as_i64().unwrap_or(0),
        "readyReplicas": s["readyReplicas"].as_i64().unwrap_or(0),
        "availableReplicas": available,
        "unavailableReplicas": (want - available).max(0),
        "conditions": [
            condition("Available", available >= want, "MinimumReplicasAvailable"),
            condition("Progressing", true, "NewReplicaSetAvailable"),
        ]});
        let same = [
            "observedGeneration",
            "replicas",
            "readyReplicas",
            "availableReplicas",
        ]
        .iter()
        .all(|k| d["status"][k] == status[k]);
        if !same {
            let mut d = d.clone();
            d["status"] = status;
            let path = format!("/apis/apps/v1/namespaces/{ns}/deployments/{name}/status");
            client.send("PUT", &path, Some(&d));
        }
    }
}

/// The ReplicaSet controller: Pods up or down to the replicas, the status
/// counted from them.
fn sync_replica_sets(client: &Client) {
    let (_, list) = client.get("/apis/apps/v1/replicasets");
    for rs in items(&list).iter().filter(|rs| live(rs)) {
        let ns = rs["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = rs["metadata"]["name"].as_str().unwrap_or_default();
        let (_, pods) = client.get(&format!(
            "/api/v1/namespaces/{ns}/pods?labelSelector={}",
            selector(&rs["spec"]["selector"]["matchLabels"])
        ));
        let pods: Vec<Value> = items(&pods)
            .into_iter()
            .filter(|p| live(p) && controlled_by(p, &rs["metadata"]["uid"]))
            .collect();
        let want = usize::try_from(rs["spec"]["replicas"].as_i64().unwrap_or(1)).unwrap_or(0);
        if pods.len() < want {
            let template = &rs["spec"]["template"];
            let pod = json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"generateName": format!("{name}-"), "namespace": ns,
                    "labels": template["metadata"]["labels"],
                    "ownerReferences": [owner("apps/v1", "ReplicaSet", rs)]},
                "spec": template["spec"]});
            for _ in pods.len()..want {
                client.send("POST", &format!("/api/v1/namespaces/{ns}/pods"), Some(&pod));
            }
            continue;
        }
        for extra in pods.iter().skip(want) {
            let pod = extra["metadata"]["name"].as_str().unwrap_or_default();
            client.send(
                "DELETE",
                &format!("/api/v1/namespaces/{ns}/pods/{pod}"),
                None,
            );
        }
        let count = pods.len().min(want);
        let ready = pods.iter().take(want).filter(|p| ready(p)).count();
        let status = json!({"replicas": count, "fullyLabeledReplicas": count,
            "readyReplicas": ready, "availableReplicas": ready,
            "observedGeneration": rs["metadata"]["generation"]});
        let same = ["replicas", "readyReplicas", "observedGeneration"]
            .iter()
            .all(|k| rs["status"][k] == status[k]);
        if !same {
            let mut rs = rs.clone();
            rs["status"] = status;
            let path = format!("/apis/apps/v1/namespaces/{ns}/replicasets/{name}/status");
            client.send("PUT", &path, Some(&rs));
        }
    }
}

/// The scheduler: each unbound Pod bound to a node (round robin) through the
/// `binding` subresource, and a `Scheduled` event (events.k8s.io/v1).
fn schedule(client: &Client, nodes: &[String], tick: u64) {
    let (_, list) = client.get("/api/v1/pods?fieldSelector=spec.nodeName%3D");
    for (i, pod) in items(&list).iter().filter(|p| live(p)).enumerate() {
        let meta = &pod["metadata"];
        let ns = meta["namespace"].as_str().unwrap_or_default();
        let name = meta["name"].as_str().unwrap_or_default();
        let node = &nodes[(usize::try_from(tick).unwrap_or(0) + i) % nodes.len()];
        let binding = json!({"apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": name, "namespace": ns, "uid": meta["uid"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}});
        let (code, _) = client.send(
            "POST",
            &format!("/api/v1/namespaces/{ns}/pods/{name}/binding"),
            Some(&binding),
        );
        if code != 201 {
            continue;
        }
        let micros = jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%S.%6fZ")
            .to_string();
        let event = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"generateName": format!("{name}."), "namespace": ns},
            "eventTime": micros, "reportingController": "default-scheduler",
            "reportingInstance": "default-scheduler-stand-in", "action": "Binding",
            "reason": "Scheduled", "type": "Normal",
            "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": ns, "name": name,
                "uid": meta["uid"]},
            "note": format!("Successfully assigned {ns}/{name} to {node}")});
        client.send(
            "POST",
            &format!("/apis/events.k8s.io/v1/namespaces/{ns}/events"),
            Some(&event),
        );
    }
}

/// The Job controller: one Pod per Job, and the Job complete when it
/// succeeded (SuccessCriteriaMet, then Complete, as 1.32 writes them).
fn sync_jobs(client: &Client) {
    let (_, list) = client.get("/apis/batch/v1/jobs");
    for job in items(&list).iter().filter(|j| live(j)) {
        if job["status"]["completionTime"].is_string() {
            continue;
        }
        let ns = job["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = job["metadata"]["name"].as_str().unwrap_or_default();
        let uid = &job["metadata"]["uid"];
        let (_, pods) = client.get(&format!(
            "/api/v1/namespaces/{ns}/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3D{name}"
        ));
        let pods: Vec<Value> = items(&pods)
            .into_iter()
            .filter(|p| controlled_by(p, uid))
            .collect();
        let at = now_seconds();
        if pods.is_empty() {
            let template = &job["spec"]["template"];
            let pod = json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"generateName": format!("{name}-"), "namespace": ns,
                    "labels": template["metadata"]["labels"],
                    "ownerReferences": [owner("batch/v1", "Job", job)]},
                "spec": template["spec"]});
            client.send("POST", &format!("/api/v1/namespaces/{ns}/pods"), Some(&pod));
            if job["status"]["startTime"].is_null() {
                let mut job = job.clone();
                job["status"] = json!({"startTime": at, "active": 1, "ready": 0,
                    "terminating": 0, "uncountedTerminatedPods": {}});
                let path = format!("/apis/batch/v1/namespaces/{ns}/jobs/{name}/status");
                client.send("PUT", &path, Some(&job));
            }
            continue;
        }
        if pods.iter().any(|p| p["status"]["phase"] == "Succeeded") {
            let condition = |type_: &str| {
                json!({"type": type_, "status": "True", "reason": "CompletionsReached",
                    "message": "Reached expected number of succeeded pods",
                    "lastProbeTime": at, "lastTransitionTime": at})
            };
            let mut job = job.clone();
            let started = job["status"]["startTime"].clone();
            job["status"] = json!({"startTime": started, "completionTime": at, "succeeded": 1,
                "active": 0, "ready": 0, "terminating": 0, "uncountedTerminatedPods": {},
                "conditions": [condition("SuccessCriteriaMet"), condition("Complete")]});
            let path = format!("/apis/batch/v1/namespaces/{ns}/jobs/{name}/status");
            client.send("PUT", &path, Some(&job));
        }
    }
}

/// The CronJob controller: a Job for the schedule's time (here the first
/// pass after the CronJob appears), then `lastScheduleTime`.
fn sync_cron_jobs(client: &Client) {
    let (_, list) = client.get("/apis/batch/v1/cronjobs");
    for cron in items(&list).iter().filter(|c| live(c)) {
        if cron["status"]["lastScheduleTime"].is_string() {
            continue;
        }
        let ns = cron["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = cron["metadata"]["name"].as_str().unwrap_or_default();
        let minutes = jiff::Timestamp::now().as_second() / 60;
        let template = &cron["spec"]["jobTemplate"];
        let job = json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": format!("{name}-{minutes}"), "namespace": ns,
                "labels": template["metadata"]["labels"],
                "annotations": {"batch.kubernetes.io/cronjob-scheduled-timestamp": now_seconds()},
                "ownerReferences": [owner("batch/v1", "CronJob", cron)]},
            "spec": template["spec"]});
        let (code, _) = client.send(
            "POST",
            &format!("/apis/batch/v1/namespaces/{ns}/jobs"),
            Some(&job),
        );
        if code == 201 {
            let mut cron = cron.clone();
            cron["status"] = json!({"lastScheduleTime": now_seconds()});
            let path = format!("/apis/batch/v1/namespaces/{ns}/cronjobs/{name}/status");
            client.send("PUT", &path, Some(&cron));
        }
    }
}

/// The EndpointSlice controller: one slice per Service with a selector,
/// listing its ready Pods.
fn sync_endpoint_slices(client: &Client) {
    let (_, list) = client.get("/api/v1/services");
    for service in items(&list).iter().filter(|s| live(s)) {
        let Some(labels) = service["spec"]["selector"].as_object() else {
            continue;
        };
        let ns = service["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default();
        let name = service["metadata"]["name"].as_str().unwrap_or_default();
        let (_, pods) = client.get(&format!(
            "/api/v1/namespaces/{ns}/pods?labelSelector={}",
            selector(&Value::Object(labels.clone()))
        ));
        let endpoints: Vec<Value> = items(&pods)
            .iter()
            .filter(|p| live(p) && p["status"]["podIP"].is_string())
            .map(|p| {
                json!({"addresses": [p["status"]["podIP"]],
                    "conditions": {"ready": ready(p), "serving": ready(p), "terminating": false},
                    "nodeName": p["spec"]["nodeName"],
                    "targetRef": {"kind": "Pod", "namespace": ns, "name": p["metadata"]["name"],
                        "uid": p["metadata"]["uid"]}})
            })
            .collect();
        let ports: Vec<Value> = service["spec"]["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                json!({"name": p["name"].as_str().unwrap_or(""), "port": p["targetPort"],
                "protocol": p["protocol"]})
            })
            .collect();
        let (_, slices) = client.get(&format!(
            "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D{name}"
        ));
        let collection = format!("/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices");
        match items(&slices).into_iter().next() {
            None => {
                let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": {"generateName": format!("{name}-"), "namespace": ns,
                        "labels": {"kubernetes.io/service-name": name,
                            "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"},
                        "ownerReferences": [owner("v1", "Service", service)]},
                    "addressType": "IPv4", "endpoints": endpoints, "ports": ports});
                client.send("POST", &collection, Some(&slice));
            }
            Some(mut slice)
                if slice["endpoints"].as_array().cloned().unwrap_or_default() != endpoints =>
            {
                slice["endpoints"] = json!(endpoints);
                let slice_name = slice["metadata"]["name"].as_str().unwrap_or_default();
                client.send("PUT", &format!("{collection}/{slice_name}"), Some(&slice));
            }
            Some(_) => {}
        }
    }
}
