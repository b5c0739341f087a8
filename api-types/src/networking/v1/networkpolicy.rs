//! NetworkPolicies: which traffic may reach and leave a set of pods.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::IntOrString;
use kapi_runtime::meta::{LabelSelector, ObjectMeta};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::{null_as_default, omitempty};
use crate::labels::format_selector;

/// Allow-list rules for the traffic of the pods it selects; the network
/// plugin enforces them. Policies add up: traffic is allowed when any allows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "networking.k8s.io",
    version = "v1",
    plural = "networkpolicies",
    storage_prefix = "networkpolicies",
    short_names("netpol"),
    printer_column(name = "Pod-Selector", type = "string", json_path = ".spec.podSelector",
        description = "The pods the policy applies to."),
    table_cells = networkpolicy_cells
)]
#[api(defaults = super::defaults::default_network_policy)]
pub struct NetworkPolicy {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The pods and the traffic allowed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: NetworkPolicySpec,
}

/// The pods a network policy applies to and the traffic it allows them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::networkpolicy::validate_network_policy_spec)]
pub struct NetworkPolicySpec {
    /// Pods of the policy's namespace it applies to; empty selects them all.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 1)]
    #[api(required)]
    pub pod_selector: LabelSelector,
    /// Incoming traffic allowed (when `Ingress` is among the policy types);
    /// empty allows none.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub ingress: Option<Vec<NetworkPolicyIngressRule>>,
    /// Outgoing traffic allowed (when `Egress` is among the policy types);
    /// empty allows none.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub egress: Option<Vec<NetworkPolicyEgressRule>>,
    /// Directions the policy restricts, `Ingress` and/or `Egress`. Unset means
    /// `Ingress`, plus `Egress` when egress rules are given.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub policy_types: Option<Vec<String>>,
}

/// Incoming traffic allowed: from any of the peers, to any of the ports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicyIngressRule {
    /// Destination ports on the selected pods; empty means every port.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub ports: Option<Vec<NetworkPolicyPort>>,
    /// Sources allowed; empty means every source.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub from: Option<Vec<NetworkPolicyPeer>>,
}

/// Outgoing traffic allowed: to any of the peers, on any of the ports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicyEgressRule {
    /// Destination ports; empty means every port.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub ports: Option<Vec<NetworkPolicyPort>>,
    /// Destinations allowed; empty means every destination.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub to: Option<Vec<NetworkPolicyPeer>>,
}

/// A port, or a range of ports, with a protocol.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicyPort {
    /// `TCP` (the default), `UDP` or `SCTP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    #[api(default = "TCP")]
    pub protocol: Option<String>,
    /// Port number or named container port; unset means every port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub port: Option<IntOrString>,
    /// Last port of a range starting at the numeric `port` (inclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub end_port: Option<i32>,
}

/// A range of IP addresses, with holes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct IPBlock {
    /// The range, in CIDR notation, e.g. `192.168.1.0/24` or `2001:db8::/64`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub cidr: String,
    /// Sub-ranges of `cidr` excluded from it, in CIDR notation.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub except: Option<Vec<String>>,
}

/// A source or destination of traffic: pods picked by selectors, or an IP
/// range (exactly one kind of peer).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicyPeer {
    /// Pods, in the policy's namespace or in the namespaces the namespace
    /// selector picks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub pod_selector: Option<LabelSelector>,
    /// Namespaces whose pods (all, or those of the pod selector) are peers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub namespace_selector: Option<LabelSelector>,
    /// An IP range, for traffic that does not come from or go to pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub ip_block: Option<IPBlock>,
}

/// The `kubectl get networkpolicies` row (kube-apiserver's
/// `printNetworkPolicy`): the pod selector in label syntax.
fn networkpolicy_cells(policy: &NetworkPolicy) -> Vec<Value> {
    vec![json!(format_selector(Some(&policy.spec.pod_selector)))]
}
