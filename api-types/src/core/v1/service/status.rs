//! The observed state of a service.

use kapi_codegen::ApiType;
use kapi_runtime::meta::Time;
use serde::{Deserialize, Serialize};

use crate::go_json::{null_as_default, omitempty};

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
    #[api(proto = 2)]
    pub conditions: Option<Vec<Condition>>,
}

/// The entry points of a load balancer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct LoadBalancerStatus {
    /// Addresses at which the load balancer takes traffic.
    #[serde(default, skip_serializing_if = "omitempty")]
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

/// A standard condition (meta/v1 `Condition`) as used in the status of newer
/// kinds: a type, a status and when and why it last changed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type in CamelCase, e.g. `Available`.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[api(required, one_of("True", "False", "Unknown"))]
    #[api(proto = 2)]
    pub status: String,
    /// The `metadata.generation` the condition was computed from.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub observed_generation: Option<i64>,
    /// When the status last changed.
    #[serde(default)]
    #[api(proto = 4, proto_value)]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change, in CamelCase.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 5)]
    pub reason: String,
    /// Human-readable detail of the last change.
    #[serde(default)]
    #[api(proto = 6)]
    pub message: String,
}
