//! Services: stable virtual addresses and DNS names in front of a set of pods.

pub mod spec;
pub mod status;
mod table;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::IntOrString;
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

pub use spec::{ServicePort, ServiceSpec};
pub use status::ServiceStatus;

use crate::defaulting::default_text;
use crate::go_json::null_as_default;

/// A named network endpoint for the pods its selector picks, reachable inside the
/// cluster and, depending on its type, from outside.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "services",
    return_deleted_object,
    short_names("svc"),
    generation = false,
    name_format = "dns1035-label",
    categories("all"),
    status,
    selectable_fields("spec.clusterIP", "spec.type"),
    printer_column(name = "Type", type = "string", json_path = ".spec.type",
        description = "How the service is exposed."),
    printer_column(name = "Cluster-IP", type = "string", json_path = ".spec.clusterIP",
        description = "Virtual IP inside the cluster."),
    printer_column(name = "External-IP", type = "string", json_path = ".spec.externalIPs",
        description = "Addresses reachable from outside the cluster."),
    printer_column(name = "Port(s)", type = "string", json_path = ".spec.ports",
        description = "Ports the service serves, with their node ports."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the service was created."),
    printer_column(name = "Selector", type = "string", json_path = ".spec.selector",
        priority = 1, description = "Labels of the pods behind the service."),
    prepare = prepare_service,
    validate_update = super::validation::validate_service_update,
    table_cells = table::service_cells
)]
#[api(defaults = default_service)]
pub struct Service {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// How the service is exposed and which pods it sends traffic to.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: ServiceSpec,
    /// Load balancer state and conditions.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: ServiceStatus,
}

/// Seconds a `ClientIP` session sticks to one endpoint unless configured (3 hours).
const CLIENT_IP_TIMEOUT_SECONDS: i32 = 10800;

/// The service strategy: `clusterIP` and `clusterIPs` kept in step. (The
/// addresses and IP families themselves are allocated by the server.)
fn prepare_service(svc: &mut Service) {
    normalize_cluster_ips(&mut svc.spec);
}

/// `SetDefaults_Service`. Many of these defaults depend on the type, so they are
/// computed here with the type's own default already applied.
fn default_service(svc: &mut Service) {
    let spec = &mut svc.spec;
    let type_ = default_text(&mut spec.type_, "ClusterIP").to_owned();
    if default_text(&mut spec.session_affinity, "None") == "None" {
        spec.session_affinity_config = None;
    } else if spec.session_affinity.as_deref() == Some("ClientIP") {
        let config = spec
            .session_affinity_config
            .get_or_insert_with(Default::default);
        let client_ip = config.client_ip.get_or_insert_with(Default::default);
        client_ip
            .timeout_seconds
            .get_or_insert(CLIENT_IP_TIMEOUT_SECONDS);
    }
    for port in spec.ports.iter_mut().flatten() {
        default_text(&mut port.protocol, "TCP");
        let unset = match &port.target_port {
            None => true,
            Some(IntOrString::Int(n)) => *n == 0,
            Some(IntOrString::String(s)) => s.is_empty(),
        };
        if unset {
            port.target_port = Some(IntOrString::Int(port.port));
        }
    }
    let has_external_ips = spec
        .external_ips
        .as_ref()
        .is_some_and(|ips| !ips.is_empty());
    let externally_accessible = matches!(type_.as_str(), "LoadBalancer" | "NodePort")
        || (type_ == "ClusterIP" && has_external_ips);
    if externally_accessible {
        default_text(&mut spec.external_traffic_policy, "Cluster");
    }
    if matches!(type_.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer") {
        spec.internal_traffic_policy
            .get_or_insert_with(|| "Cluster".to_owned());
    }
    if type_ == "LoadBalancer" {
        spec.allocate_load_balancer_node_ports.get_or_insert(true);
        let ingress = svc.status.load_balancer.ingress.iter_mut().flatten();
        for ing in ingress.filter(|i| !i.ip.as_deref().unwrap_or_default().is_empty()) {
            ing.ip_mode.get_or_insert_with(|| "VIP".to_owned());
        }
    }
}

/// `clusterIPs[0]` and `clusterIP` name the same address; a client may set either.
fn normalize_cluster_ips(spec: &mut ServiceSpec) {
    let single = spec.cluster_ip.clone().filter(|ip| !ip.is_empty());
    let first = spec
        .cluster_ips
        .as_ref()
        .and_then(|ips| ips.first())
        .cloned();
    match (single, first) {
        (Some(ip), None) => spec.cluster_ips = Some(vec![ip]),
        (None, Some(ip)) => spec.cluster_ip = Some(ip),
        _ => {}
    }
}
