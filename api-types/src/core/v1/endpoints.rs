//! Endpoints: the addresses and ports that back a service.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::reference::ObjectReference;
use crate::go_json::omitempty;

/// The network endpoints of a service, grouped into subsets of addresses that
/// share the same ports; the endpoints controller keeps it in step with pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "endpoints",
    storage_prefix = "services/endpoints",
    singular = "endpoints",
    short_names("ep"),
    generation = false,
    printer_column(name = "Endpoints", type = "string", json_path = ".subsets",
        description = "Up to three address:port pairs of ready addresses."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the endpoints object was created."),
    table_cells = endpoints_cells
)]
pub struct Endpoints {
    /// Name (the service's), namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// Groups of addresses with the ports they all serve; the endpoints are the
    /// union of all subsets.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub subsets: Option<Vec<EndpointSubset>>,
}

/// Addresses that all serve the same set of ports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_endpoint_subset)]
pub struct EndpointSubset {
    /// Addresses ready to receive traffic on the ports.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub addresses: Option<Vec<EndpointAddress>>,
    /// Addresses not ready yet (starting, or failing readiness checks).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub not_ready_addresses: Option<Vec<EndpointAddress>>,
    /// Ports every address of the subset serves.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub ports: Option<Vec<EndpointPort>>,
}

/// One IP address of an endpoint, with where it comes from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct EndpointAddress {
    /// The IP address (IPv4 or IPv6); not loopback, link-local or multicast.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub ip: String,
    /// Hostname of the endpoint, used for per-pod DNS records.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub hostname: Option<String>,
    /// Node that hosts the endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub node_name: Option<String>,
    /// The object behind the address, usually a pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub target_ref: Option<ObjectReference>,
}

/// A port served by the addresses of a subset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct EndpointPort {
    /// Name matching the service port's name; may be empty with a single port.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub name: Option<String>,
    /// Port number.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub port: i32,
    /// `TCP`, `UDP` or `SCTP`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    #[api(default = "TCP")]
    pub protocol: Option<String>,
    /// Application protocol, e.g. `http`, `kubernetes.io/h2c` or a domain-prefixed
    /// name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub app_protocol: Option<String>,
}

/// Most address:port pairs the Endpoints cell lists before summarising the rest.
const ENDPOINTS_SHOWN: usize = 3;

/// The `kubectl get endpoints` row: ready addresses with their ports (addresses
/// alone in subsets without ports), at most three, then the age.
fn endpoints_cells(ep: &Endpoints) -> Vec<Value> {
    vec![
        json!(format_endpoints(ep)),
        json!(ep.metadata.creation_timestamp.map(|t| t.to_string())),
    ]
}

/// `10.0.0.1:80,10.0.0.2:80 + 3 more...`, or `<none>` without subsets.
fn format_endpoints(ep: &Endpoints) -> String {
    let subsets = ep.subsets.as_deref().unwrap_or_default();
    if subsets.is_empty() {
        return "<none>".to_owned();
    }
    let mut shown = Vec::new();
    let mut count = 0;
    for subset in subsets {
        let addresses = subset.addresses.as_deref().unwrap_or_default();
        let ports = subset.ports.as_deref().unwrap_or_default();
        if ports.is_empty() {
            count += addresses.len();
            shown.extend(addresses.iter().map(|a| a.ip.clone()));
        }
        for port in ports {
            count += addresses.len();
            shown.extend(addresses.iter().map(|a| host_port(&a.ip, port.port)));
        }
        shown.truncate(ENDPOINTS_SHOWN);
    }
    let list = shown.join(",");
    if count > ENDPOINTS_SHOWN {
        format!("{list} + {} more...", count - ENDPOINTS_SHOWN)
    } else {
        list
    }
}

/// `ip:port`, with an IPv6 address in brackets.
fn host_port(ip: &str, port: i32) -> String {
    if ip.contains(':') {
        format!("[{ip}]:{port}")
    } else {
        format!("{ip}:{port}")
    }
}
