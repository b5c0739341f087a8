//! The `Warning` headers of writes, against what kube-apiserver 1.32 sent for
//! the same manifests. Each case of `fixtures/warnings/` is `<kind>_<case>.json`
//! (with `<kind>_<case>.old.json` for an update of that object) and the texts
//! the reference answered, one a line, in `<kind>_<case>.warnings.txt`
//! (recorded by `capture.py` there). An empty file records a write that drew
//! no warning: the kinds whose strategies warn about nothing have one each.

use kapi_api_types::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use kapi_api_types::autoscaling::{v1 as autoscaling_v1, v2 as autoscaling_v2};
use kapi_api_types::batch::v1::{CronJob, Job};
use kapi_api_types::coordination::v1::Lease;
use kapi_api_types::discovery::v1::EndpointSlice;
use kapi_api_types::networking::v1::{Ingress, IngressClass, NetworkPolicy};
use kapi_api_types::node::v1::RuntimeClass;
use kapi_api_types::policy::v1::PodDisruptionBudget;
use kapi_api_types::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kapi_api_types::scheduling::v1::PriorityClass;
use kapi_api_types::storage::v1::{
    CSIDriver, CSINode, CSIStorageCapacity, StorageClass, VolumeAttachment,
};
use kapi_runtime::Resource;
use serde::de::DeserializeOwned;

/// How the recorded lines are compared with ours.
#[derive(Clone, Copy)]
enum Order {
    /// Line for line.
    Exact,
    /// As sets: upstream's lines come from a Go map, whose order is random.
    Any,
}

fn read(name: &str) -> Option<String> {
    let path = format!(
        "{}/tests/fixtures/warnings/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).ok()
}

/// Decodes `<case>.json` (and `<case>.old.json`), runs the kind's warnings
/// and compares them with `<case>.warnings.txt`.
#[track_caller]
fn check<T: Resource + DeserializeOwned>(case: &str, order: Order) {
    let decode = |name: &str| -> Option<T> {
        let text = read(name)?;
        Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}")))
    };
    let new = decode(&format!("{case}.json")).unwrap_or_else(|| panic!("{case}.json missing"));
    let old = decode(&format!("{case}.old.json"));
    let recorded = read(&format!("{case}.warnings.txt"))
        .unwrap_or_else(|| panic!("{case}.warnings.txt missing: run capture.py"));
    let mut want: Vec<String> = recorded.lines().map(str::to_string).collect();
    let mut got = new.warnings(old.as_ref());
    if let Order::Any = order {
        want.sort();
        got.sort();
    }
    assert_eq!(got, want, "{case}");
}

#[test]
fn workloads_warn_as_recorded() {
    // The pod template's warnings (already wired), the name pods are named
    // after, and when an update judges the template again.
    check::<Deployment>("deployment_create", Order::Exact);
    check::<Deployment>("deployment_update", Order::Exact);
    check::<Deployment>("deployment_annotations", Order::Exact);
    check::<Deployment>("deployment_labels", Order::Exact);
    check::<ReplicaSet>("replicaset_create", Order::Exact);
    check::<DaemonSet>("daemonset_create", Order::Exact);
    check::<StatefulSet>("statefulset_create", Order::Exact);
    check::<StatefulSet>("statefulset_update", Order::Exact);
    check::<ControllerRevision>("controllerrevision_create", Order::Exact);
}

#[test]
fn jobs_warn_as_recorded() {
    check::<Job>("job_create", Order::Exact);
    check::<Job>("job_indexed", Order::Exact);
    check::<Job>("job_update", Order::Exact);
    check::<Job>("job_labels", Order::Exact);
    check::<CronJob>("cronjob_create", Order::Exact);
    check::<CronJob>("cronjob_update", Order::Exact);
}

#[test]
fn networking_and_discovery_warn_as_recorded() {
    check::<Ingress>("ingress_create", Order::Exact);
    check::<Ingress>("ingress_update", Order::Exact);
    check::<IngressClass>("ingressclass_create", Order::Exact);
    check::<NetworkPolicy>("networkpolicy_create", Order::Exact);
    check::<EndpointSlice>("endpointslice_create", Order::Exact);
    check::<EndpointSlice>("endpointslice_update", Order::Exact);
}

#[test]
fn storage_and_node_warn_as_recorded() {
    check::<StorageClass>("storageclass_create", Order::Exact);
    check::<StorageClass>("storageclass_update", Order::Exact);
    check::<CSIStorageCapacity>("csistoragecapacity_create", Order::Exact);
    check::<CSIStorageCapacity>("csistoragecapacity_update", Order::Exact);
    check::<CSIDriver>("csidriver_create", Order::Exact);
    check::<CSINode>("csinode_create", Order::Exact);
    check::<VolumeAttachment>("volumeattachment_create", Order::Exact);
    check::<RuntimeClass>("runtimeclass_create", Order::Any);
    check::<RuntimeClass>("runtimeclass_update", Order::Any);
}

#[test]
fn kinds_without_warnings_stay_silent() {
    check::<autoscaling_v2::HorizontalPodAutoscaler>(
        "horizontalpodautoscaler_create",
        Order::Exact,
    );
    check::<autoscaling_v1::HorizontalPodAutoscaler>("horizontalpodautoscaler_v1", Order::Exact);
    check::<PodDisruptionBudget>("poddisruptionbudget_create", Order::Exact);
    check::<PriorityClass>("priorityclass_create", Order::Exact);
    check::<Lease>("lease_create", Order::Exact);
    check::<Role>("role_create", Order::Exact);
    check::<ClusterRole>("clusterrole_create", Order::Exact);
    check::<RoleBinding>("rolebinding_create", Order::Exact);
    check::<ClusterRoleBinding>("clusterrolebinding_create", Order::Exact);
}
