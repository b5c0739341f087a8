//! EndpointSlices: the network endpoints behind a service, in slices of at
//! most 1000 endpoints each.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::v1::reference::ObjectReference;
use crate::go_json::{null_as_default, omitempty};

/// A set of endpoints of one address type sharing one list of ports; the
/// `kubernetes.io/service-name` label ties it to its service.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "discovery.k8s.io",
    version = "v1",
    plural = "endpointslices",
    storage_prefix = "endpointslices",
    printer_column(name = "AddressType", type = "string", json_path = ".addressType",
        description = "Kind of address of the endpoints."),
    printer_column(name = "Ports", type = "string", json_path = ".ports",
        description = "The ports, by number or name (first three)."),
    printer_column(name = "Endpoints", type = "string", json_path = ".endpoints",
        description = "Addresses of the endpoints (first three)."),
    table_cells = endpointslice_cells,
    validate_update = super::validation::validate_endpoint_slice_update,
    warnings = endpointslice_warnings
)]
#[api(validate = super::validation::validate_endpoint_slice)]
pub struct EndpointSlice {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// Kind of every address in the slice: `IPv4`, `IPv6` or `FQDN`. Immutable.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 4)]
    pub address_type: String,
    /// The endpoints (at most 1000). Go writes `null` for an unset list.
    #[serde(default)]
    #[api(schema_required, list_type = "atomic")]
    #[api(proto = 2)]
    pub endpoints: Option<Vec<Endpoint>>,
    /// Ports every endpoint of the slice serves (at most 100); an empty list
    /// means none, a port without number means all ports. Go writes `null` for
    /// an unset list.
    #[serde(default)]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub ports: Option<Vec<EndpointPort>>,
}

/// One backend of a service: its addresses and state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    /// Addresses of the endpoint, of the slice's address type; consumers use
    /// the first. At least one, at most 100. Go writes `null` for an unset list.
    #[serde(default)]
    #[api(schema_required, list_type = "set")]
    #[api(proto = 1)]
    pub addresses: Option<Vec<String>>,
    /// Whether the endpoint is ready, serving and terminating.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub conditions: EndpointConditions,
    /// DNS label of the endpoint, e.g. the pod's hostname for headless
    /// services.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub hostname: Option<String>,
    /// The object behind the endpoint, usually a pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub target_ref: Option<ObjectReference>,
    /// Topology labels of the endpoint, from before `nodeName` and `zone`
    /// existed; dropped on writes through v1, kept only for reading old data.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub deprecated_topology: Option<BTreeMap<String, String>>,
    /// Node hosting the endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6)]
    pub node_name: Option<String>,
    /// Zone of the endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub zone: Option<String>,
    /// Routing hints for topology-aware consumers such as kube-proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub hints: Option<EndpointHints>,
}

/// The state of an endpoint; unset conditions are to be read as unknown.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct EndpointConditions {
    /// Whether the endpoint should receive new traffic; consumers treat unset
    /// as ready. Always false while terminating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub ready: Option<bool>,
    /// Like `ready`, but also reported while terminating (for pods: their
    /// Ready condition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub serving: Option<bool>,
    /// Whether the endpoint is shutting down (for pods: a deletion timestamp
    /// is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub terminating: Option<bool>,
}

/// Hints on which consumers should use an endpoint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct EndpointHints {
    /// Zones whose consumers should route to this endpoint.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub for_zones: Option<Vec<ForZone>>,
}

/// A zone an endpoint should serve.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ForZone {
    /// Name of the zone.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub name: String,
}

/// A port the endpoints of a slice serve. Replaced as a whole by merges (Go's
/// `structType=atomic`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct EndpointPort {
    /// Name of the port, matching the service port's name (a DNS label, or
    /// empty for a single unnamed port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    #[api(default = "")]
    pub name: Option<String>,
    /// `TCP` (the default), `UDP` or `SCTP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    #[api(default = "TCP")]
    pub protocol: Option<String>,
    /// Port number; unset means every port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub port: Option<i32>,
    /// Application protocol, e.g. `http`, `kubernetes.io/h2c` or a
    /// domain-prefixed name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub app_protocol: Option<String>,
}

/// Up to three entries joined by commas, then ` + N more...`, or `<unset>`
/// (kube-apiserver's `listWithMoreString`).
fn first_three<'a>(items: impl Iterator<Item = &'a str>) -> String {
    const MAX: usize = 3;
    let mut shown = Vec::new();
    let mut count = 0;
    for item in items {
        if shown.len() < MAX {
            shown.push(item);
        }
        count += 1;
    }
    if count > MAX {
        format!("{} + {} more...", shown.join(","), count - MAX)
    } else if shown.is_empty() {
        "<unset>".to_owned()
    } else {
        shown.join(",")
    }
}

/// The `kubectl get endpointslices` row (kube-apiserver's `printEndpointSlice`):
/// ports by number (else name, else `*`) and the endpoints' addresses.
fn endpointslice_cells(slice: &EndpointSlice) -> Vec<Value> {
    let ports: Vec<String> = slice
        .ports
        .iter()
        .flatten()
        .map(|p| match (p.port, &p.name) {
            (Some(port), _) => port.to_string(),
            (None, Some(name)) => name.clone(),
            (None, None) => "*".to_owned(),
        })
        .collect();
    let addresses = slice
        .endpoints
        .iter()
        .flatten()
        .flat_map(|e| e.addresses.iter().flatten())
        .map(String::as_str);
    vec![
        json!(slice.address_type),
        json!(first_three(ports.iter().map(String::as_str))),
        json!(first_three(addresses)),
    ]
}

/// The `Warning` header of an EndpointSlice create: the FQDN address type is
/// deprecated. Updates warn about nothing (kube-apiserver 1.32).
fn endpointslice_warnings(eps: &EndpointSlice, old: Option<&EndpointSlice>) -> Vec<String> {
    if old.is_none() && eps.address_type == "FQDN" {
        vec!["spec.addressType: FQDN endpoints are deprecated".to_string()]
    } else {
        Vec::new()
    }
}
