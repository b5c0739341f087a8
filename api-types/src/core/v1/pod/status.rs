//! The observed state of a pod, reported by the kubelet.

use std::collections::BTreeMap;

use kapi_codegen::ApiType;
use kapi_runtime::Quantity;
use kapi_runtime::meta::Time;
use serde::{Deserialize, Serialize};

use super::container::ResourceRequirements;
use crate::go_json::{null_as_default, omitempty};

/// What is known about a pod: its phase, conditions, addresses and the state of
/// every container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    /// Summary of the pod's life: `Pending`, `Running`, `Succeeded`, `Failed` or
    /// `Unknown`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(one_of("Pending", "Running", "Succeeded", "Failed", "Unknown"))]
    #[api(proto = 1)]
    pub phase: Option<String>,
    /// Conditions such as `PodScheduled`, `Initialized`, `ContainersReady`, `Ready`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("type"),
        patch_strategy = "merge",
        patch_merge_key = "type"
    )]
    #[api(proto = 2)]
    pub conditions: Option<Vec<PodCondition>>,
    /// Human-readable detail on the current state.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub message: Option<String>,
    /// Short machine-readable reason for the state, e.g. `Evicted`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub reason: Option<String>,
    /// Node the scheduler preempted other pods on for this pod.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 11)]
    pub nominated_node_name: Option<String>,
    /// Primary IP of the node the pod runs on.
    #[serde(default, rename = "hostIP", skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub host_ip: Option<String>,
    /// All IPs of the node, one per address family.
    #[serde(default, rename = "hostIPs", skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic", patch_strategy = "merge", patch_merge_key = "ip")]
    #[api(proto = 16)]
    pub host_ips: Option<Vec<HostIP>>,
    /// Primary IP of the pod.
    #[serde(default, rename = "podIP", skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub pod_ip: Option<String>,
    /// All IPs of the pod, one per address family.
    #[serde(default, rename = "podIPs", skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("ip"),
        patch_strategy = "merge",
        patch_merge_key = "ip"
    )]
    #[api(proto = 12)]
    pub pod_ips: Option<Vec<PodIP>>,
    /// When the kubelet accepted the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub start_time: Option<Time>,
    /// State of each init container.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 10)]
    pub init_container_statuses: Option<Vec<ContainerStatus>>,
    /// State of each regular container.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 8)]
    pub container_statuses: Option<Vec<ContainerStatus>>,
    /// Quality of service class from the resources: `Guaranteed`, `Burstable` or
    /// `BestEffort`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 9)]
    pub qos_class: Option<String>,
    /// State of each ephemeral container.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 13)]
    pub ephemeral_container_statuses: Option<Vec<ContainerStatus>>,
    /// Progress of an in-place resize (deprecated in favour of conditions).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 14)]
    pub resize: Option<String>,
    /// Names of the ResourceClaims made for the pod's claim templates.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("name"),
        patch_strategy = "merge,retainKeys",
        patch_merge_key = "name"
    )]
    #[api(proto = 15)]
    pub resource_claim_statuses: Option<Vec<PodResourceClaimStatus>>,
}

/// One condition of a pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodCondition {
    /// Condition type, e.g. `Ready`.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[api(required, one_of("True", "False", "Unknown"))]
    #[api(proto = 2)]
    pub status: String,
    /// When the condition was last checked.
    #[serde(default)]
    #[api(proto = 3, proto_value)]
    pub last_probe_time: Option<Time>,
    /// When the status last changed.
    #[serde(default)]
    #[api(proto = 4, proto_value)]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub reason: Option<String>,
    /// Human-readable detail of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub message: Option<String>,
}

/// One IP address of a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct HostIP {
    /// The address.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub ip: String,
}

/// One IP address of a pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodIP {
    /// The address.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub ip: String,
}

/// The state of one container of a pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::round_allocated_resources)]
pub struct ContainerStatus {
    /// Name of the container in the spec.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// What the container is doing now.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub state: ContainerState,
    /// How the previous run of the container ended.
    #[serde(default, rename = "lastState", deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub last_state: ContainerState,
    /// Whether the readiness probe passes.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 4)]
    pub ready: bool,
    /// How often the container was restarted.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 5)]
    pub restart_count: i32,
    /// Image the container runs, as the runtime names it.
    #[serde(default)]
    #[api(proto = 6)]
    #[api(schema_required)]
    pub image: String,
    /// Digest-qualified ID of that image.
    #[serde(default, rename = "imageID")]
    #[api(proto = 7)]
    #[api(schema_required)]
    pub image_id: String,
    /// Runtime ID of the container, `<type>://<id>`.
    #[serde(default, rename = "containerID", skip_serializing_if = "omitempty")]
    #[api(proto = 8)]
    pub container_id: Option<String>,
    /// Whether the container passed its startup probe (or has none and runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    pub started: Option<bool>,
    /// Resources the node allocated to the container.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 10)]
    pub allocated_resources: Option<BTreeMap<String, Quantity>>,
    /// Resources the runtime actually applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 11)]
    pub resources: Option<ResourceRequirements>,
    /// Mounts of the container as the runtime reports them.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("mountPath"),
        patch_strategy = "merge",
        patch_merge_key = "mountPath"
    )]
    #[api(proto = 12)]
    pub volume_mounts: Option<Vec<VolumeMountStatus>>,
    /// User identity of the container's first process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 13)]
    pub user: Option<ContainerUser>,
    /// Health of the devices allocated to the container.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("name"),
        patch_strategy = "merge",
        patch_merge_key = "name"
    )]
    #[api(proto = 14)]
    pub allocated_resources_status: Option<Vec<ResourceStatus>>,
}

/// The state of a container; at most one field is set (none means waiting).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ContainerState {
    /// Not running yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub waiting: Option<ContainerStateWaiting>,
    /// Running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub running: Option<ContainerStateRunning>,
    /// Ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub terminated: Option<ContainerStateTerminated>,
}

/// A container that does not run yet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateWaiting {
    /// Why, e.g. `ContainerCreating`, `ImagePullBackOff`, `CrashLoopBackOff`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub reason: Option<String>,
    /// Human-readable detail.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub message: Option<String>,
}

/// A running container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateRunning {
    /// When it (re)started.
    #[serde(default)]
    #[api(proto = 1, proto_value)]
    pub started_at: Option<Time>,
}

/// A container that ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateTerminated {
    /// Exit status of the process.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub exit_code: i32,
    /// Signal that ended the process, if one did.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub signal: Option<i32>,
    /// Why, e.g. `Completed`, `Error`, `OOMKilled`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub reason: Option<String>,
    /// Human-readable detail (the termination message).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub message: Option<String>,
    /// When the run started.
    #[serde(default)]
    #[api(proto = 5, proto_value)]
    pub started_at: Option<Time>,
    /// When the run ended.
    #[serde(default)]
    #[api(proto = 6, proto_value)]
    pub finished_at: Option<Time>,
    /// Runtime ID of the ended container, `<type>://<id>`.
    #[serde(default, rename = "containerID", skip_serializing_if = "omitempty")]
    #[api(proto = 7)]
    pub container_id: Option<String>,
}

/// The user identity a container runs with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ContainerUser {
    /// On Linux: UID, GID and supplementary groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub linux: Option<LinuxContainerUser>,
}

/// A Linux user identity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct LinuxContainerUser {
    /// User ID.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub uid: i64,
    /// Primary group ID.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub gid: i64,
    /// Supplementary group IDs.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub supplemental_groups: Option<Vec<i64>>,
}

/// Health of the devices behind one allocated resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ResourceStatus {
    /// The resource, e.g. a device plugin resource or `claim:<name>`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Health per device.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("resourceID"))]
    #[api(proto = 2)]
    pub resources: Option<Vec<ResourceHealth>>,
}

/// Health of one device.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ResourceHealth {
    /// ID of the device.
    #[serde(default, rename = "resourceID")]
    #[api(required)]
    #[api(proto = 1)]
    pub resource_id: String,
    /// `Healthy`, `Unhealthy` or `Unknown`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub health: Option<String>,
}

/// A mount of a container as the runtime reports it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct VolumeMountStatus {
    /// Name of the volume mount.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Mount path.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub mount_path: String,
    /// Whether the mount is read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub read_only: Option<bool>,
    /// Effective recursive read-only mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub recursive_read_only: Option<String>,
}

/// The ResourceClaim made for one of the pod's claim templates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodResourceClaimStatus {
    /// Name of the entry in `spec.resourceClaims`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Name of the claim made; unset when none was needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub resource_claim_name: Option<String>,
}
