//! The observed state of a service.

use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

use crate::go_json::{null_as_default, omitempty};

/// metav1.Condition, which the service status uses; declared with the meta types.
pub use kapi_runtime::meta::Condition;

/// The state of a service's load balancer, and its conditions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ServiceStatus {
    /// The load balancer, once provisioned.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 1)]
    pub load_balancer: LoadBalancerStatus,
    /// Conditions of the service.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("type"),
        patch_strategy = "merge",
        patch_merge_key = "type"
    )]
    #[api(proto = 2)]
    pub conditions: Option<Vec<Condition>>,
}

/// The entry points of a load balancer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct LoadBalancerStatus {
    /// Addresses at which the load balancer takes traffic.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub ingress: Option<Vec<LoadBalancerIngress>>,
}

/// One entry point of a load balancer: an IP or a host name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct LoadBalancerIngress {
    /// IP address of the entry point.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub ip: Option<String>,
    /// DNS name of the entry point.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub hostname: Option<String>,
    /// `VIP` (traffic arrives addressed to the IP) or `Proxy` (addressed to the
    /// node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("VIP", "Proxy"))]
    #[api(proto = 3)]
    pub ip_mode: Option<String>,
    /// State of each port of the entry point.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub ports: Option<Vec<PortStatus>>,
}

/// The state of one load balancer port.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PortStatus {
    /// Port number.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub port: i32,
    /// `TCP`, `UDP` or `SCTP`.
    #[serde(default)]
    #[api(required, one_of("TCP", "UDP", "SCTP"))]
    #[api(proto = 2)]
    pub protocol: String,
    /// Why the port does not work, as a CamelCase reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub error: Option<String>,
}
