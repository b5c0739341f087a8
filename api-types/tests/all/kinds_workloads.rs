//! The workload kinds (apps/v1 ReplicaSet, DaemonSet, ControllerRevision; batch/v1
//! Job, CronJob; policy/v1 PodDisruptionBudget) against objects the real
//! kube-apiserver 1.32 wrote (`tests/fixtures/<group>/<kind>.json` and `.pb`,
//! fetched as JSON and as protobuf): every JSON field is known and written back
//! as Go wrote it, and Go's protobuf bytes decode and re-encode byte for byte.
//! Also the `kubectl get` cells of each fixture, as the real server printed them,
//! and the policy/v1 Eviction body.

use kapi_api_types::apps::v1::{ControllerRevision, DaemonSet, ReplicaSet};
use kapi_api_types::batch::v1::{CronJob, Job};
use kapi_api_types::policy::v1::{Eviction, PodDisruptionBudget};
use kapi_runtime::Resource;
use kapi_runtime::meta::DeleteOptions;
use serde_json::{Value, json};

use crate::support;

use kapi_runtime::proto::Message;
use support::go_bytes::{assert_same_bytes, both, json_round_trip, proto_round_trip};

/// The printer-column names of a kind, Name excluded (the server adds it).
fn column_names<K: Resource>() -> Vec<&'static str> {
    K::INFO.printer_columns.iter().map(|c| c.name).collect()
}

/// The kind's own cells; `date` columns hold the timestamp the server turns
/// into an age.
fn cells<K: Resource>(object: &K) -> Vec<Value> {
    object.table_cells().expect("the kind computes its cells")
}

#[test]
fn replicaset() {
    let rs = both::<ReplicaSet>("apps/replicaset");
    assert_eq!(rs.status.replicas, 3);
    assert_eq!(
        column_names::<ReplicaSet>(),
        [
            "Desired",
            "Current",
            "Ready",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    let created = rs.metadata.creation_timestamp.expect("created").to_string();
    assert_eq!(
        cells(&rs),
        [
            json!(3),
            json!(3),
            json!(2),
            json!(created),
            json!("web,sidecar"),
            json!("nginx:1.27,busybox:1.36"),
            json!("app=web,tier in (edge,frontend)"),
        ]
    );
}

#[test]
fn daemonset() {
    let ds = both::<DaemonSet>("apps/daemonset");
    assert_eq!(
        column_names::<DaemonSet>(),
        [
            "Desired",
            "Current",
            "Ready",
            "Up-to-date",
            "Available",
            "Node Selector",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    let created = ds.metadata.creation_timestamp.expect("created").to_string();
    assert_eq!(
        cells(&ds),
        [
            json!(5),
            json!(4),
            json!(3),
            json!(4),
            json!(3),
            json!("kubernetes.io/os=linux,role=worker"),
            json!(created),
            json!("agent"),
            json!("registry.example/agent:2.1"),
            json!("app=agent"),
        ]
    );
}

#[test]
fn controllerrevision() {
    let json_form = json_round_trip::<ControllerRevision>("apps/controllerrevision");
    let proto_form = proto_round_trip::<ControllerRevision>("apps/controllerrevision");
    // The data arrived as indented JSON: protobuf keeps those bytes, JSON writes
    // them compacted; both are the same document.
    let json_raw = json_form.data.raw.as_ref().expect("data");
    let proto_raw = proto_form.data.raw.as_ref().expect("data");
    assert_ne!(json_raw, proto_raw);
    let parse = |raw: &[u8]| serde_json::from_slice::<Value>(raw).expect("JSON");
    assert_eq!(parse(&json_raw.0), parse(&proto_raw.0));
    let written = serde_json::to_string(&proto_form.data).expect("JSON");
    assert_eq!(
        written.as_bytes(),
        json_raw.0.as_slice(),
        "compacted as Go does"
    );
    assert_eq!(
        serde_json::to_value(&json_form).expect("JSON"),
        serde_json::to_value(&proto_form).expect("JSON"),
    );
    let data = serde_json::to_value(&proto_form).expect("JSON")["data"].clone();
    assert_eq!(data["spec"]["template"]["$patch"], "replace");
    assert_eq!(proto_form.revision, 2);
    // Absent data is JSON null, and no bytes in protobuf.
    let empty = ControllerRevision::default();
    assert_eq!(
        serde_json::to_value(&empty).expect("JSON")["data"],
        Value::Null
    );
    let back: ControllerRevision =
        serde_json::from_value(json!({"data": null, "revision": 1})).expect("decodes");
    assert_eq!(back.data.raw, None);
    assert_eq!(
        ControllerRevision::decode(&empty.encode_to_vec()).expect("decodes"),
        empty
    );

    assert_eq!(
        column_names::<ControllerRevision>(),
        ["Controller", "Revision", "Age"]
    );
    let created = json_form.metadata.creation_timestamp.expect("created");
    assert_eq!(
        cells(&json_form),
        [
            json!("daemonset.apps/agent"),
            json!(2),
            json!(created.to_string())
        ]
    );
    let orphan = ControllerRevision {
        revision: 7,
        ..ControllerRevision::default()
    };
    assert_eq!(cells(&orphan)[..2], [json!("<none>"), json!(7)]);
}

#[test]
fn job() {
    let job = both::<Job>("batch/job");
    let policy = job.spec.pod_failure_policy.as_ref().expect("policy");
    assert_eq!(policy.rules.len(), 3);
    let uncounted = job.status.uncounted_terminated_pods.as_ref().expect("set");
    assert_eq!(uncounted.failed.as_ref().map(Vec::len), Some(1));
    assert_eq!(
        column_names::<Job>(),
        [
            "Status",
            "Completions",
            "Duration",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    // Running (SuccessCriteriaMet does not change the printed status in 1.32):
    // the duration is the time since the start.
    let created = job
        .metadata
        .creation_timestamp
        .expect("created")
        .to_string();
    assert_eq!(
        cells(&job),
        [
            json!("Running"),
            json!("2/4"),
            json!("2025-01-02T03:00:00Z"),
            json!(created),
            json!("main"),
            json!("python:3.12-slim"),
            json!("batch.kubernetes.io/controller-uid=41384111-d288-4357-afb2-83f69ccb4f53"),
        ]
    );

    let done = both::<Job>("batch/job-complete");
    assert!(done.status.completion_time.is_some());
    let done_cells = cells(&done);
    assert_eq!(
        done_cells[..3],
        [json!("Complete"), json!("1/1"), json!("10m")]
    );
}

#[test]
fn cronjob() {
    let cj = both::<CronJob>("batch/cronjob");
    assert_eq!(cj.status.active.as_ref().map(Vec::len), Some(2));
    assert_eq!(
        column_names::<CronJob>(),
        [
            "Schedule",
            "Timezone",
            "Suspend",
            "Active",
            "Last Schedule",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    let created = cj.metadata.creation_timestamp.expect("created").to_string();
    assert_eq!(
        cells(&cj),
        [
            json!("30 2 * * 1-5"),
            json!("Europe/Berlin"),
            json!("True"),
            json!(2),
            json!("2025-01-03T01:30:00Z"),
            json!(created),
            json!("backup"),
            json!("registry.example/backup:1.4"),
            json!("<none>"),
        ]
    );
}

#[test]
fn poddisruptionbudget() {
    let pdb = both::<PodDisruptionBudget>("policy/poddisruptionbudget");
    assert_eq!(pdb.status.disrupted_pods.as_ref().map(|m| m.len()), Some(2));
    assert_eq!(
        column_names::<PodDisruptionBudget>(),
        [
            "Min Available",
            "Max Unavailable",
            "Allowed Disruptions",
            "Age"
        ]
    );
    let created = pdb
        .metadata
        .creation_timestamp
        .expect("created")
        .to_string();
    assert_eq!(
        cells(&pdb),
        [json!("50%"), json!("N/A"), json!(1), json!(created)]
    );
}

#[test]
fn eviction_body() {
    let body = json!({
        "kind": "Eviction",
        "apiVersion": "policy/v1",
        "metadata": {"name": "web-abc12", "namespace": "workloads"},
        "deleteOptions": {"gracePeriodSeconds": 30, "dryRun": ["All"]}
    });
    let eviction: Eviction = serde_json::from_value(body.clone()).expect("decodes");
    assert_eq!(
        eviction
            .delete_options
            .as_ref()
            .and_then(|o| o.grace_period_seconds),
        Some(30)
    );
    // Go writes the unset creation time of the metadata as null.
    let mut written = body.clone();
    written["metadata"]["creationTimestamp"] = Value::Null;
    assert_eq!(serde_json::to_value(&eviction).expect("JSON"), written);

    // metadata = 1, deleteOptions = 2 {gracePeriodSeconds = 1, dryRun = 5}, as
    // upstream's generated.proto numbers them.
    let bytes = eviction.encode_to_vec();
    let meta = eviction.metadata.encode_to_vec();
    let mut expected = vec![0x0a, u8::try_from(meta.len()).expect("short")];
    expected.extend_from_slice(&meta);
    expected.extend_from_slice(&[0x12, 7, 0x08, 30, 0x2a, 3]);
    expected.extend_from_slice(b"All");
    assert_same_bytes(&bytes, &expected, "eviction");
    let back = Eviction::decode(&bytes).expect("decodes");
    assert_eq!(back.metadata, eviction.metadata);
    assert_eq!(back.delete_options, eviction.delete_options);
    assert_eq!(Eviction::NAME, "Eviction");
    let no_options = Eviction {
        delete_options: None::<DeleteOptions>,
        ..back
    };
    assert_eq!(no_options.encode_to_vec(), expected[..2 + meta.len()]);
}
