//! `kubectl get` rows computed by the kinds' table hooks, and pod graceful
//! deletion.

use crate::common;

use common::{admit_clean, fixture, object};
use kapi_api_types::apps::v1::Deployment;
use kapi_api_types::core::v1::{ConfigMap, Event, Node, Pod, Secret, Service};
use kapi_runtime::Resource;
use kapi_runtime::scheme::KindEntry;
use serde_json::{Value, json};

/// The row of an object as it is stored (after admission).
fn row<T: Resource>(object: Value) -> Vec<Value> {
    let Value::Object(map) = object else {
        panic!("not an object")
    };
    let stored = admit_clean::<T>(map);
    typed::<T>(stored)
        .table_cells()
        .expect("the kind computes its cells")
}

/// An admitted object back as the kind's type behind the request path's trait.
fn typed<T: Resource>(stored: Value) -> Box<dyn kapi_runtime::DynObject> {
    KindEntry::of::<T>()
        .ops
        .decode_value(stored)
        .expect("decodes")
        .object
}

fn running_pod() -> Value {
    json!({
        "metadata": {"name": "web", "creationTimestamp": "2024-05-01T12:00:00Z"},
        "spec": {
            "nodeName": "worker-1",
            "initContainers": [
                {"name": "setup", "image": "busybox:1.36"},
                {"name": "proxy", "image": "envoy:1.30", "restartPolicy": "Always"}
            ],
            "containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}],
            "readinessGates": [{"conditionType": "example.com/ready"}]
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Initialized", "status": "True"},
                {"type": "Ready", "status": "True"},
                {"type": "example.com/ready", "status": "True"}
            ],
            "podIPs": [{"ip": "10.244.1.7"}, {"ip": "fd00::7"}],
            "podIP": "10.244.1.7",
            "initContainerStatuses": [
                {"name": "setup", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
                 "ready": false, "restartCount": 1, "image": "busybox:1.36", "imageID": ""},
                {"name": "proxy", "state": {"running": {"startedAt": "2024-05-01T12:00:05Z"}},
                 "ready": true, "started": true, "restartCount": 2, "image": "envoy:1.30", "imageID": ""}
            ],
            "containerStatuses": [
                {"name": "a", "state": {"running": {"startedAt": "2024-05-01T12:00:10Z"}}, "ready": true,
                 "restartCount": 3, "image": "x:1", "imageID": ""},
                {"name": "b", "state": {"running": {"startedAt": "2024-05-01T12:00:10Z"}}, "ready": false,
                 "restartCount": 0, "image": "y:1", "imageID": ""}
            ]
        }
    })
}

#[test]
fn running_pod_with_a_sidecar() {
    assert_eq!(
        row::<Pod>(running_pod()),
        [
            json!("2/3"),
            json!("Running"),
            json!(5),
            json!("2024-05-01T12:00:00Z"),
            json!("10.244.1.7"),
            json!("worker-1"),
            json!("<none>"),
            json!("1/1"),
        ]
    );
}

#[test]
fn pod_status_column() {
    let status = |pod: Value| row::<Pod>(pod)[1].clone();

    let mut crashing = running_pod();
    crashing["status"]["containerStatuses"][1]["state"] =
        json!({"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}});
    assert_eq!(status(crashing), "CrashLoopBackOff");

    let mut deleting = running_pod();
    deleting["metadata"]["deletionTimestamp"] = json!("2024-05-01T13:00:00Z");
    assert_eq!(status(deleting), "Terminating");

    let mut initializing = running_pod();
    initializing["status"]["conditions"] = json!([]);
    initializing["status"]["initContainerStatuses"][0]["state"] =
        json!({"waiting": {"reason": "PodInitializing"}});
    assert_eq!(status(initializing.clone()), "Init:0/2");
    initializing["status"]["initContainerStatuses"][0]["state"] =
        json!({"waiting": {"reason": "ImagePullBackOff"}});
    assert_eq!(status(initializing.clone()), "Init:ImagePullBackOff");
    initializing["status"]["initContainerStatuses"][0]["state"] =
        json!({"terminated": {"exitCode": 2}});
    assert_eq!(status(initializing), "Init:ExitCode:2");

    let completed = json!({
        "metadata": {"name": "job"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x:1"}]},
        "status": {"phase": "Succeeded", "containerStatuses": [
            {"name": "c", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}, "ready": false,
             "restartCount": 0, "image": "x:1", "imageID": ""}
        ]}
    });
    assert_eq!(status(completed.clone()), "Completed");
    let mut completed_deleting = completed;
    completed_deleting["metadata"]["deletionTimestamp"] = json!("2024-05-01T13:00:00Z");
    assert_eq!(
        status(completed_deleting),
        "Completed",
        "finished pods do not show Terminating"
    );

    let gated = json!({
        "metadata": {"name": "g"},
        "spec": {"containers": [{"name": "c", "image": "x:1"}], "schedulingGates": [{"name": "wait"}]},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}
    });
    assert_eq!(status(gated), "SchedulingGated");
}

#[test]
fn new_pod_row() {
    let pod =
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}});
    assert_eq!(
        row::<Pod>(pod),
        [
            json!("0/1"),
            json!("Pending"),
            json!(0),
            Value::Null,
            json!("<none>"),
            json!("<none>"),
            json!("<none>"),
            json!("<none>"),
        ]
    );
}

#[test]
fn pod_grace_period() {
    let grace = |pod: Value, requested: Option<i64>| {
        let Value::Object(map) = pod else { panic!() };
        typed::<Pod>(admit_clean::<Pod>(map)).deletion_grace_period(requested)
    };
    let bound = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x:1"}]}});
    assert_eq!(
        grace(bound.clone(), None),
        Some(30),
        "the spec's default period"
    );
    assert_eq!(
        grace(bound.clone(), Some(5)),
        Some(5),
        "the requested period wins"
    );
    assert_eq!(
        grace(bound.clone(), Some(0)),
        Some(0),
        "zero: marked, then removed"
    );
    assert_eq!(
        grace(bound.clone(), Some(-3)),
        Some(1),
        "negative means one second"
    );
    let mut custom = bound.clone();
    custom["spec"]["terminationGracePeriodSeconds"] = json!(120);
    assert_eq!(grace(custom, None), Some(120));
    let unbound =
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}});
    assert_eq!(
        grace(unbound, Some(30)),
        Some(0),
        "never scheduled: nothing to stop"
    );
    let mut finished = bound;
    finished["status"] = json!({"phase": "Succeeded"});
    assert_eq!(grace(finished, None), Some(0), "already terminated");
}

#[test]
fn deployment_row() {
    let mut deploy = Value::Object(fixture("deployment.json"));
    deploy["metadata"]["creationTimestamp"] = json!("2024-05-01T12:00:00Z");
    deploy["status"] =
        json!({"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2});
    assert_eq!(
        row::<Deployment>(deploy),
        [
            json!("2/3"),
            json!(3),
            json!(2),
            json!("2024-05-01T12:00:00Z"),
            json!("web,exporter"),
            json!("nginx:1.27,nginx/nginx-prometheus-exporter"),
            json!("app=web,tier in (frontend)"),
        ]
    );
}

#[test]
fn service_rows() {
    let cells = row::<Service>(Value::Object(fixture("service.json")));
    assert_eq!(
        cells,
        [
            json!("NodePort"),
            json!("10.96.12.34"),
            json!("192.0.2.10"),
            json!("80/TCP,443:30443/TCP,53/UDP"),
            Value::Null,
            json!("app=web,tier=frontend"),
        ]
    );
    let pending_lb = json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 443, "nodePort": 31000}]}});
    let cells = row::<Service>(pending_lb);
    assert_eq!(cells[1], "<none>");
    assert_eq!(cells[2], "<pending>");
    assert_eq!(cells[3], "443:31000/TCP");
    assert_eq!(cells[5], "<none>");
    let external = json!({"metadata": {"name": "db"}, "spec": {"type": "ExternalName", "externalName": "db.example.com"}});
    let cells = row::<Service>(external);
    assert_eq!(cells[2], "db.example.com");
    assert_eq!(cells[3], "<none>");
}

#[test]
fn node_row() {
    let cells = row::<Node>(Value::Object(fixture("node.json")));
    assert_eq!(
        cells,
        [
            json!("Ready,SchedulingDisabled"),
            json!("ingress,worker"),
            Value::Null,
            json!("v1.32.2"),
            json!("172.18.0.3"),
            json!("<none>"),
            json!("Debian GNU/Linux 12 (bookworm)"),
            json!("6.1.0-21-amd64"),
            json!("containerd://1.7.15"),
        ]
    );
    let bare = row::<Node>(json!({"metadata": {"name": "n"}}));
    assert_eq!(bare[0], "Unknown");
    assert_eq!(bare[1], "<none>");
    assert_eq!(bare[6], "<unknown>");
}

#[test]
fn event_row() {
    let cells = row::<Event>(Value::Object(fixture("event.json")));
    assert_eq!(
        cells,
        [
            json!("2024-05-01T12:05:00Z"),
            json!("Warning"),
            json!("BackOff"),
            json!("pod/web-0"),
            json!("Back-off restarting failed container web in pod web-0_shop(0b6a5d1e)"),
        ]
    );
    let series = json!({
        "metadata": {"name": "e", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": "n1"},
        "eventTime": "2024-05-01T12:00:00.5Z",
        "series": {"count": 2, "lastObservedTime": "2024-05-01T12:30:00.9Z"},
        "reportingComponent": "kubelet",
        "reportingInstance": "n1"
    });
    assert_eq!(row::<Event>(series)[0], "2024-05-01T12:30:00Z");
}

#[test]
fn secret_and_configmap_rows() {
    assert_eq!(
        row::<Secret>(Value::Object(fixture("secret.json"))),
        [json!("Opaque"), json!(2)]
    );
    let cm = object(
        json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}}),
    );
    assert_eq!(row::<ConfigMap>(Value::Object(cm)), [json!(3)]);
}
