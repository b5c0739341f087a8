//! The desired state of a service.

use std::collections::BTreeMap;

use kapi_codegen::ApiType;
use kapi_runtime::IntOrString;
use serde::{Deserialize, Serialize};

use crate::go_json::omitempty;

/// How a service is exposed and which pods receive its traffic.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = crate::core::v1::validation::validate_service_spec)]
pub struct ServiceSpec {
    /// Ports the service serves.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("port", "protocol"),
        patch_strategy = "merge",
        patch_merge_key = "port"
    )]
    #[api(proto = 1)]
    pub ports: Option<Vec<ServicePort>>,
    /// Labels of the pods that receive the traffic; without a selector the
    /// endpoints are managed by hand.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(map_type = "atomic")]
    #[api(proto = 2)]
    pub selector: Option<BTreeMap<String, String>>,
    /// Virtual IP of the service, allocated unless given; `None` makes the
    /// service headless (DNS returns the pod IPs).
    #[serde(default, rename = "clusterIP", skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub cluster_ip: Option<String>,
    /// Virtual IPs of the service, one per address family; the first equals
    /// `clusterIP`.
    #[serde(default, rename = "clusterIPs", skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 18)]
    pub cluster_ips: Option<Vec<String>>,
    /// `ClusterIP` (inside the cluster), `NodePort` (also on a port of every
    /// node), `LoadBalancer` (also through an external load balancer) or
    /// `ExternalName` (a DNS alias).
    #[serde(default, rename = "type", skip_serializing_if = "omitempty")]
    #[api(
        default = "ClusterIP",
        one_of("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
    )]
    #[api(proto = 4)]
    pub type_: Option<String>,
    /// Extra IPs of nodes on which the service accepts traffic.
    #[serde(default, rename = "externalIPs", skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 5)]
    pub external_ips: Option<Vec<String>>,
    /// `ClientIP` keeps a client on one endpoint; `None` spreads requests.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "None", one_of("ClientIP", "None"))]
    #[api(proto = 7)]
    pub session_affinity: Option<String>,
    /// Requested load balancer IP, where the provider supports it (deprecated).
    #[serde(default, rename = "loadBalancerIP", skip_serializing_if = "omitempty")]
    #[api(proto = 8)]
    pub load_balancer_ip: Option<String>,
    /// Client CIDRs the load balancer admits, where the provider supports it.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 9)]
    pub load_balancer_source_ranges: Option<Vec<String>>,
    /// For `ExternalName`: the DNS name the service is an alias of.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 10)]
    pub external_name: Option<String>,
    /// For external traffic: `Cluster` (any endpoint) or `Local` (endpoints on the
    /// receiving node only, keeping the client IP).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 11)]
    pub external_traffic_policy: Option<String>,
    /// Node port answering load balancer health checks for the `Local` policy.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 12)]
    pub health_check_node_port: Option<i32>,
    /// Publish addresses of pods that are not ready, e.g. for peer discovery.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 13)]
    pub publish_not_ready_addresses: Option<bool>,
    /// Settings of `ClientIP` session affinity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 14)]
    pub session_affinity_config: Option<SessionAffinityConfig>,
    /// Address families of the service, `IPv4` and/or `IPv6`, in order.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 19)]
    pub ip_families: Option<Vec<String>>,
    /// `SingleStack`, `PreferDualStack` or `RequireDualStack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("PreferDualStack", "RequireDualStack", "SingleStack"))]
    #[api(proto = 17)]
    pub ip_family_policy: Option<String>,
    /// For `LoadBalancer`: whether node ports are allocated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 20)]
    pub allocate_load_balancer_node_ports: Option<bool>,
    /// For `LoadBalancer`: which load balancer implementation serves the service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 21)]
    pub load_balancer_class: Option<String>,
    /// For traffic from inside the cluster: `Cluster` or `Local`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("Cluster", "Local"))]
    #[api(proto = 22)]
    pub internal_traffic_policy: Option<String>,
    /// Preference for how traffic is spread, e.g. `PreferClose`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 23)]
    pub traffic_distribution: Option<String>,
}

/// One port of a service.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ServicePort {
    /// Name of the port (a DNS label); required when there are several.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(format = "dns1123-label")]
    #[api(proto = 1)]
    pub name: Option<String>,
    /// `TCP`, `UDP` or `SCTP`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "TCP")]
    #[api(proto = 2)]
    pub protocol: Option<String>,
    /// Application protocol, e.g. `http` or `kubernetes.io/h2c`, as a hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6)]
    pub app_protocol: Option<String>,
    /// Port the service listens on.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 3)]
    pub port: i32,
    /// Port number or named container port on the pods; `port` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub target_port: Option<IntOrString>,
    /// Port on every node, for `NodePort` and `LoadBalancer`; allocated unless
    /// given.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub node_port: Option<i32>,
}

/// Session affinity settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SessionAffinityConfig {
    /// Settings of `ClientIP` affinity.
    #[serde(default, rename = "clientIP", skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub client_ip: Option<ClientIPConfig>,
}

/// Settings of `ClientIP` session affinity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ClientIPConfig {
    /// Seconds a session sticks, from 1 to 86400.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub timeout_seconds: Option<i32>,
}
