//! Nodes: the machines pods run on.

pub mod status;

use std::collections::BTreeSet;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use status::NodeStatus;

use crate::go_json::{null_as_default, omitempty};

/// A worker machine, registered by its kubelet, with its capacity and health.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "nodes",
    storage_prefix = "minions",
    short_names("no"),
    generation = false,
    cluster_scoped,
    status,
    selectable_fields("spec.unschedulable"),
    printer_column(name = "Status", type = "string", json_path = ".status.conditions",
        description = "Ready or NotReady from the Ready condition, and whether scheduling is disabled."),
    printer_column(name = "Roles", type = "string", json_path = ".metadata.labels",
        description = "Roles from the node-role.kubernetes.io/<role> labels."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the node registered."),
    printer_column(name = "Version", type = "string", json_path = ".status.nodeInfo.kubeletVersion",
        description = "Version of the node's kubelet."),
    printer_column(name = "Internal-IP", type = "string", json_path = ".status.addresses",
        priority = 1, description = "First internal IP address of the node."),
    printer_column(name = "External-IP", type = "string", json_path = ".status.addresses",
        priority = 1, description = "First external IP address of the node."),
    printer_column(name = "OS-Image", type = "string", json_path = ".status.nodeInfo.osImage",
        priority = 1, description = "Operating system image of the node."),
    printer_column(name = "Kernel-Version", type = "string",
        json_path = ".status.nodeInfo.kernelVersion", priority = 1,
        description = "Kernel version of the node."),
    printer_column(name = "Container-Runtime", type = "string",
        json_path = ".status.nodeInfo.containerRuntimeVersion", priority = 1,
        description = "Container runtime and its version."),
    validate_update = super::validation::validate_node_update,
    table_cells = node_cells,
    warnings = super::validation::node_warnings
)]
#[api(defaults = super::defaults::default_node)]
#[api(validate = super::validation::validate_node)]
pub struct Node {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// How the node is configured for scheduling.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: NodeSpec,
    /// What the node reports about itself.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: NodeStatus,
}

/// The configuration of a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NodeSpec {
    /// Pod IP range assigned to the node (the first of `podCIDRs`).
    #[serde(default, rename = "podCIDR", skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub pod_cidr: Option<String>,
    /// Pod IP ranges assigned to the node, at most one per address family.
    #[serde(default, rename = "podCIDRs", skip_serializing_if = "omitempty")]
    #[api(list_type = "set", patch_strategy = "merge")]
    #[api(proto = 7)]
    pub pod_cidrs: Option<Vec<String>>,
    /// ID of the node at its cloud provider, `<provider>://<id>`.
    #[serde(default, rename = "providerID", skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub provider_id: Option<String>,
    /// Keep new pods off the node (`kubectl cordon`).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub unschedulable: Option<bool>,
    /// Taints repelling pods that do not tolerate them.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 5)]
    pub taints: Option<Vec<Taint>>,
    /// Retired dynamic kubelet configuration; ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6)]
    pub config_source: Option<NodeConfigSource>,
    /// Retired; kept so old clients decode.
    #[serde(default, rename = "externalID", skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub external_id: Option<String>,
}

/// A mark on a node that repels pods without a matching toleration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    /// Taint key.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub key: String,
    /// Taint value.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub value: Option<String>,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute` (also evicts running pods).
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 3)]
    pub effect: String,
    /// When a `NoExecute` taint was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub time_added: Option<Time>,
}

/// Retired: where a kubelet read its configuration from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NodeConfigSource {
    /// A ConfigMap holding the configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub config_map: Option<ConfigMapNodeConfigSource>,
}

/// Retired: a ConfigMap holding kubelet configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMapNodeConfigSource {
    /// Namespace of the ConfigMap.
    #[serde(default)]
    #[api(proto = 1)]
    #[api(schema_required)]
    pub namespace: String,
    /// Name of the ConfigMap.
    #[serde(default)]
    #[api(proto = 2)]
    #[api(schema_required)]
    pub name: String,
    /// UID of the ConfigMap.
    #[serde(default, rename = "uid", skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub uid: Option<String>,
    /// resourceVersion of the ConfigMap.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub resource_version: Option<String>,
    /// Key of the ConfigMap holding the configuration.
    #[serde(default)]
    #[api(proto = 5)]
    #[api(schema_required)]
    pub kubelet_config_key: String,
}

/// Labels naming a node's roles: `node-role.kubernetes.io/<role>`, and the older
/// `kubernetes.io/role=<role>`.
const ROLE_LABEL_PREFIX: &str = "node-role.kubernetes.io/";
const ROLE_LABEL: &str = "kubernetes.io/role";

/// The `kubectl get nodes` row (kube-apiserver's `printNode`).
fn node_cells(node: &Node) -> Vec<Value> {
    let info = &node.status.node_info;
    vec![
        json!(node_status(node)),
        json!(node_roles(node)),
        json!(node.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(info.kubelet_version),
        json!(node.status.address("InternalIP").unwrap_or("<none>")),
        json!(node.status.address("ExternalIP").unwrap_or("<none>")),
        json!(or_unknown(&info.os_image)),
        json!(or_unknown(&info.kernel_version)),
        json!(or_unknown(&info.container_runtime_version)),
    ]
}

/// `Ready`, `NotReady` or `Unknown`, plus `SchedulingDisabled` when cordoned.
fn node_status(node: &Node) -> String {
    let ready = node
        .status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "Ready");
    let mut parts = vec![match ready {
        Some(c) if c.status == "True" => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }];
    if node.spec.unschedulable == Some(true) {
        parts.push("SchedulingDisabled");
    }
    parts.join(",")
}

/// Sorted, comma-separated roles, or `<none>`.
fn node_roles(node: &Node) -> String {
    let mut roles = BTreeSet::new();
    for (key, value) in node.metadata.labels.iter().flatten() {
        if let Some(role) = key
            .strip_prefix(ROLE_LABEL_PREFIX)
            .filter(|r| !r.is_empty())
        {
            roles.insert(role);
        } else if key == ROLE_LABEL && !value.is_empty() {
            roles.insert(value.as_str());
        }
    }
    if roles.is_empty() {
        return "<none>".to_owned();
    }
    roles.into_iter().collect::<Vec<_>>().join(",")
}

fn or_unknown(value: &str) -> &str {
    if value.is_empty() { "<unknown>" } else { value }
}
