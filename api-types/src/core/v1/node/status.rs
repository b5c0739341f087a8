//! The observed state of a node, reported by its kubelet.

use std::collections::BTreeMap;

use kapi_codegen::ApiType;
use kapi_runtime::Quantity;
use kapi_runtime::meta::Time;
use serde::{Deserialize, Serialize};

use super::NodeConfigSource;
use crate::go_json::{null_as_default, omitempty};

/// What a node reports: resources, health conditions, addresses, software
/// versions, cached images and attached volumes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::super::defaults::round_node_status)]
pub struct NodeStatus {
    /// Total resources of the node, e.g. `cpu`, `memory`, `pods`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub capacity: Option<BTreeMap<String, Quantity>>,
    /// Resources available to pods (capacity minus system reservations);
    /// defaults to the capacity.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub allocatable: Option<BTreeMap<String, Quantity>>,
    /// Retired lifecycle phase; no longer set.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub phase: Option<String>,
    /// Health conditions such as `Ready`, `MemoryPressure`, `DiskPressure`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("type"),
        patch_strategy = "merge",
        patch_merge_key = "type"
    )]
    #[api(proto = 4)]
    pub conditions: Option<Vec<NodeCondition>>,
    /// Addresses the node is reachable at.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("type"),
        patch_strategy = "merge",
        patch_merge_key = "type"
    )]
    #[api(proto = 5)]
    pub addresses: Option<Vec<NodeAddress>>,
    /// Ports of the daemons on the node.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 6)]
    pub daemon_endpoints: NodeDaemonEndpoints,
    /// Identity and software versions of the node.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 7)]
    pub node_info: NodeSystemInfo,
    /// Container images present on the node.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 8)]
    pub images: Option<Vec<ContainerImage>>,
    /// Volumes mounted or in use on the node.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 9)]
    pub volumes_in_use: Option<Vec<String>>,
    /// Volumes attached to the node.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 10)]
    pub volumes_attached: Option<Vec<AttachedVolume>>,
    /// Retired dynamic kubelet configuration status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 11)]
    pub config: Option<NodeConfigStatus>,
    /// Runtime handlers (runtime classes) the node offers.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 12)]
    pub runtime_handlers: Option<Vec<NodeRuntimeHandler>>,
    /// Optional features the node supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 13)]
    pub features: Option<NodeFeatures>,
}

impl NodeStatus {
    /// The first address of a type such as `InternalIP`, if any.
    pub fn address(&self, type_: &str) -> Option<&str> {
        let mut addresses = self.addresses.iter().flatten();
        addresses
            .find(|a| a.type_ == type_)
            .map(|a| a.address.as_str())
    }
}

/// One health condition of a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NodeCondition {
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
    /// When the kubelet last confirmed the condition.
    #[serde(default)]
    #[api(proto = 3, proto_value)]
    pub last_heartbeat_time: Option<Time>,
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

/// An address of a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NodeAddress {
    /// `Hostname`, `InternalIP`, `ExternalIP`, `InternalDNS` or `ExternalDNS`.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 1)]
    pub type_: String,
    /// The address.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub address: String,
}

/// Ports of the daemons running on a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NodeDaemonEndpoints {
    /// Port of the kubelet's API.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 1)]
    pub kubelet_endpoint: DaemonEndpoint,
}

/// A daemon's port.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct DaemonEndpoint {
    /// The port number (capitalised on the wire, for historical reasons).
    #[serde(default, rename = "Port")]
    #[api(required)]
    #[api(proto = 1)]
    pub port: i32,
}

/// Identity and software versions of a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NodeSystemInfo {
    /// Machine ID (`/etc/machine-id`).
    #[serde(default, rename = "machineID")]
    #[api(proto = 1)]
    #[api(schema_required)]
    pub machine_id: String,
    /// Hardware UUID.
    #[serde(default, rename = "systemUUID")]
    #[api(proto = 2)]
    #[api(schema_required)]
    pub system_uuid: String,
    /// ID of the current boot.
    #[serde(default, rename = "bootID")]
    #[api(proto = 3)]
    #[api(schema_required)]
    pub boot_id: String,
    /// Kernel version (`uname -r`).
    #[serde(default)]
    #[api(proto = 4)]
    #[api(schema_required)]
    pub kernel_version: String,
    /// Operating system image, e.g. `Debian GNU/Linux 12 (bookworm)`.
    #[serde(default)]
    #[api(proto = 5)]
    #[api(schema_required)]
    pub os_image: String,
    /// Container runtime and version, e.g. `containerd://1.7.0`.
    #[serde(default)]
    #[api(proto = 6)]
    #[api(schema_required)]
    pub container_runtime_version: String,
    /// Kubelet version.
    #[serde(default)]
    #[api(proto = 7)]
    #[api(schema_required)]
    pub kubelet_version: String,
    /// Kube-proxy version as reported by the kubelet (unreliable, deprecated).
    #[serde(default)]
    #[api(proto = 8)]
    #[api(schema_required)]
    pub kube_proxy_version: String,
    /// Operating system, e.g. `linux`.
    #[serde(default)]
    #[api(proto = 9)]
    #[api(schema_required)]
    pub operating_system: String,
    /// CPU architecture, e.g. `amd64`.
    #[serde(default)]
    #[api(proto = 10)]
    #[api(schema_required)]
    pub architecture: String,
}

/// A container image cached on a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ContainerImage {
    /// Names of the image, e.g. `nginx:1.27` and its digest form.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub names: Vec<String>,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub size_bytes: Option<i64>,
}

/// A volume attached to a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct AttachedVolume {
    /// Unique name of the volume.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Device path where it is attached.
    #[serde(default)]
    #[api(proto = 2)]
    #[api(schema_required)]
    pub device_path: String,
}

/// Retired: the state of dynamic kubelet configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NodeConfigStatus {
    /// Configuration the node was told to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub assigned: Option<NodeConfigSource>,
    /// Configuration the node uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub active: Option<NodeConfigSource>,
    /// Configuration the node falls back to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub last_known_good: Option<NodeConfigSource>,
    /// Error while applying the configuration.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub error: Option<String>,
}

/// A runtime handler of a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NodeRuntimeHandler {
    /// Handler name; empty for the default handler.
    #[serde(default)]
    #[api(proto = 1)]
    pub name: String,
    /// Features the handler supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub features: Option<NodeRuntimeHandlerFeatures>,
}

/// Features of a runtime handler.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NodeRuntimeHandlerFeatures {
    /// Recursive read-only mounts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub recursive_read_only_mounts: Option<bool>,
    /// User namespaces for pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub user_namespaces: Option<bool>,
}

/// Optional features of a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NodeFeatures {
    /// Support for `supplementalGroupsPolicy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub supplemental_groups_policy: Option<bool>,
}
