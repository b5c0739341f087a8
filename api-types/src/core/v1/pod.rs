//! Pods: the unit of scheduling, one or more containers sharing a network
//! namespace and volumes on one node.

pub mod affinity;
pub mod claim;
pub mod container;
pub mod defaults;
pub mod env;
pub mod ephemeral_container;
pub mod probe;
pub mod projected;
mod qos;
pub mod security;
pub mod spec;
pub mod status;
mod table;
pub(crate) mod validation;
pub mod volume;
pub mod volume_block;
pub mod volume_shared;
pub(crate) mod warnings;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

pub use spec::{PodSpec, PodTemplateSpec};
pub use status::PodStatus;

use crate::go_json::null_as_default;

/// A group of containers scheduled together onto one node, with the volumes and
/// network identity they share.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "pods",
    reset_status = "spec, metadata.deletionTimestamp, metadata.ownerReferences",
    short_names("po"),
    generation = false,
    categories("all"),
    status,
    return_deleted_object,
    selectable_fields(
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",
        "status.nominatedNodeName",
        "spec.host"
    ),
    // Every kubelet lists and watches its pods by node.
    indexed_fields("spec.nodeName"),
    field_label = pod_field_label,
    printer_column(name = "Ready", type = "string", json_path = ".status.containerStatuses",
        description = "Containers that are ready out of all containers of the pod."),
    printer_column(name = "Status", type = "string", json_path = ".status.phase",
        description = "Phase of the pod, or the reason a container is waiting or ended."),
    printer_column(name = "Restarts", type = "integer", json_path = ".status.containerStatuses",
        description = "Restarts of the pod's containers, added up."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the pod was created."),
    printer_column(name = "IP", type = "string", json_path = ".status.podIP", priority = 1,
        description = "Primary IP address of the pod."),
    printer_column(name = "Node", type = "string", json_path = ".spec.nodeName", priority = 1,
        description = "Node the pod is bound to."),
    printer_column(name = "Nominated Node", type = "string",
        json_path = ".status.nominatedNodeName", priority = 1,
        description = "Node the scheduler preempted pods on for this pod."),
    printer_column(name = "Readiness Gates", type = "string", json_path = ".spec.readinessGates",
        priority = 1, description = "Readiness gates that pass out of all gates."),
    subresource(name = "binding", kind = "Binding"),
    subresource(name = "eviction", group = "policy", version = "v1", kind = "Eviction"),
    subresource(
        name = "ephemeralcontainers",
        prepare_update = keep_all_but_ephemeral_containers,
        validate_update = validation::validate_ephemeral_containers_update
    ),
    prepare = defaults::prepare_pod,
    validate_update = validation::validate_pod_update,
    warnings = warnings::pod_warnings,
    table_cells = table::pod_cells,
    grace_period = deletion_grace_period
)]
#[api(defaults = defaults::default_pod)]
#[api(validate = validation::validate_pod)]
pub struct Pod {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// What the pod should run.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: PodSpec,
    /// What the pod is doing, as last reported.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: PodStatus,
}

/// A write through `pods/<name>/ephemeralcontainers` changes only the
/// ephemeral containers: everything else is the stored pod's, but for the
/// identity the body names (checked against the stored one afterwards).
fn keep_all_but_ephemeral_containers(new: &mut Pod, old: &Pod) {
    let mut pod = old.clone();
    let meta = &mut new.metadata;
    pod.metadata.name = meta.name.take();
    pod.metadata.namespace = meta.namespace.take();
    pod.metadata.resource_version = meta.resource_version.take();
    pod.metadata.uid = meta.uid.take();
    pod.spec.ephemeral_containers = new.spec.ephemeral_containers.take();
    *new = pod;
}

/// How long a deleted pod stays terminating (pod strategy `CheckGracefulDelete`):
/// the requested period, else the pod's `terminationGracePeriodSeconds`; none
/// (0: marked, then removed) when the pod never reached a node or has already
/// finished. Pods are always deleted gracefully, so this is never `None`.
fn deletion_grace_period(pod: &Pod, requested: Option<i64>) -> Option<i64> {
    let mut period = requested
        .or(pod.spec.termination_grace_period_seconds)
        .unwrap_or(30);
    if pod.spec.node_name.as_deref().unwrap_or_default().is_empty() {
        period = 0;
    }
    if matches!(pod.status.phase.as_deref(), Some("Failed" | "Succeeded")) {
        period = 0;
    }
    if period < 0 {
        period = 1;
    }
    Some(period)
}

/// Pod field selectors upstream computes (`PodToSelectableFields`): the pod IP is
/// the first of `status.podIPs`; `spec.host` is the old name of `spec.nodeName`;
/// `status.podIPs` is accepted but never set, so it reads empty.
fn pod_field_label(pod: &Pod, label: &str) -> Option<String> {
    match label {
        "status.podIP" => Some(
            pod.status
                .pod_ips
                .as_ref()
                .and_then(|ips| ips.first())
                .map(|ip| ip.ip.clone())
                .unwrap_or_default(),
        ),
        "status.podIPs" => Some(String::new()),
        "spec.host" => Some(pod.spec.node_name.clone().unwrap_or_default()),
        _ => None,
    }
}
