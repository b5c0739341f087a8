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
    storage_prefix = "services/specs",
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
    prepare_create = cluster_ips_on_create,
    prepare_update = cluster_ips_on_update,
    validate_update = super::validation::validate_service_update,
    warnings = super::validation::service_warnings,
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

/// PrepareForCreate: an old client gives `clusterIP` alone, so `clusterIPs`
/// starts with it; a new client gives both (or neither: allocation), and
/// `clusterIP` is never derived from `clusterIPs`, as upstream's
/// `normalizeClusterIPs`. (The addresses themselves are allocated by the
/// server.)
fn cluster_ips_on_create(svc: &mut Service) {
    let spec = &mut svc.spec;
    let single = spec.cluster_ip.clone().filter(|ip| !ip.is_empty());
    if let Some(ip) = single
        && spec.cluster_ips.as_ref().is_none_or(Vec::is_empty)
    {
        spec.cluster_ips = Some(vec![ip]);
    }
}

/// PrepareForUpdate: allocated values the client left out are the stored
/// ones (for idempotent replaces); then a client that knows only `clusterIP`
/// keeps the stored `clusterIPs` when it leaves `clusterIP` alone, clears
/// them with it, and replaces the first with it; anything else is left to
/// validation (upstream's `patchAllocatedValues` and `normalizeClusterIPs`).
fn cluster_ips_on_update(new: &mut Service, old: &Service) {
    keep_allocated(new, old);
    normalize_cluster_ips(new, old);
    drop_type_dependent_fields(new, old);
}

/// Fields that belong to the old type and that the update left as they were
/// go with the type (upstream's `dropTypeDependentFields`): the cluster IPs
/// and IP families leaving for ExternalName, the node ports, health check
/// port and external traffic policy leaving NodePort and LoadBalancer, and
/// what only LoadBalancers have. The server gives back what was allocated.
fn drop_type_dependent_fields(new: &mut Service, old: &Service) {
    let type_of = |svc: &Service| svc.spec.type_.clone().unwrap_or_else(|| "ClusterIP".into());
    let (new_type, old_type) = (type_of(new), type_of(old));
    let (spec, before) = (&mut new.spec, &old.spec);
    let node_ports = |t: &str| t == "NodePort" || t == "LoadBalancer";
    if old_type != "ExternalName" && new_type == "ExternalName" {
        if spec.cluster_ip == before.cluster_ip && spec.cluster_ips == before.cluster_ips {
            spec.cluster_ip = None;
            spec.cluster_ips = None;
        }
        if spec.ip_families == before.ip_families {
            spec.ip_families = None;
        }
        if spec.ip_family_policy == before.ip_family_policy {
            spec.ip_family_policy = None;
        }
        if spec.internal_traffic_policy == before.internal_traffic_policy {
            spec.internal_traffic_policy = None;
        }
    }
    if node_ports(&old_type) && !node_ports(&new_type) {
        let used = |s: &ServiceSpec| -> Vec<i32> {
            s.ports
                .iter()
                .flatten()
                .filter_map(|p| p.node_port)
                .filter(|n| *n != 0)
                .collect()
        };
        let old_used = used(before);
        if used(spec).iter().all(|n| old_used.contains(n)) {
            for port in spec.ports.iter_mut().flatten() {
                port.node_port = None;
            }
        }
        if spec.external_traffic_policy == before.external_traffic_policy {
            spec.external_traffic_policy = None;
        }
    }
    let health_check = |t: &str, s: &ServiceSpec| {
        t == "LoadBalancer" && s.external_traffic_policy.as_deref() == Some("Local")
    };
    if health_check(&old_type, before)
        && !health_check(&new_type, spec)
        && spec.health_check_node_port == before.health_check_node_port
    {
        spec.health_check_node_port = None;
    }
    if old_type == "LoadBalancer" && new_type != "LoadBalancer" {
        if spec.allocate_load_balancer_node_ports.is_some()
            && spec.allocate_load_balancer_node_ports == before.allocate_load_balancer_node_ports
        {
            spec.allocate_load_balancer_node_ports = None;
        }
        if spec.load_balancer_class == before.load_balancer_class {
            spec.load_balancer_class = None;
        }
    }
}

/// Upstream's `normalizeClusterIPs` for a client that knows only `clusterIP`.
fn normalize_cluster_ips(new: &mut Service, old: &Service) {
    let (spec, before) = (&mut new.spec, &old.spec);
    let ips = |list: &Option<Vec<String>>| list.clone().unwrap_or_default();
    let (old_single, old_ips) = (
        before.cluster_ip.clone().unwrap_or_default(),
        ips(&before.cluster_ips),
    );
    if !old_ips.is_empty()
        && ips(&spec.cluster_ips).is_empty()
        && spec.cluster_ip.clone().unwrap_or_default() == old_single
    {
        spec.cluster_ips.clone_from(&before.cluster_ips);
    }
    let single = spec.cluster_ip.clone().unwrap_or_default();
    if single != old_single {
        let same_ips = ips(&spec.cluster_ips) == old_ips;
        if !old_single.is_empty() && single.is_empty() && same_ips {
            spec.cluster_ips = None;
        }
        if ips(&spec.cluster_ips) == old_ips {
            spec.cluster_ips = Some(vec![single]);
        }
    }
}

/// The stored cluster IPs and node ports where the update leaves them out and
/// both versions of the service have them.
fn keep_allocated(new: &mut Service, old: &Service) {
    let type_of = |svc: &Service| svc.spec.type_.clone().unwrap_or_default();
    let (new_type, old_type) = (type_of(new), type_of(old));
    let (spec, before) = (&mut new.spec, &old.spec);
    if new_type != "ExternalName" && old_type != "ExternalName" {
        if spec.cluster_ip.as_deref().unwrap_or_default().is_empty() {
            spec.cluster_ip.clone_from(&before.cluster_ip);
        }
        if spec.cluster_ips.as_ref().is_none_or(Vec::is_empty)
            && before
                .cluster_ips
                .as_ref()
                .is_some_and(|ips| !ips.is_empty())
        {
            spec.cluster_ips.clone_from(&before.cluster_ips);
        }
    }
    let node_ports = |type_: &str, spec: &ServiceSpec| {
        type_ == "NodePort"
            || (type_ == "LoadBalancer" && spec.allocate_load_balancer_node_ports != Some(false))
    };
    if node_ports(&new_type, spec) && node_ports(&old_type, before) {
        let used = |s: &ServiceSpec| -> Vec<i32> {
            s.ports
                .iter()
                .flatten()
                .filter_map(|p| p.node_port)
                .filter(|n| *n != 0)
                .collect()
        };
        let (new_used, old_used) = (used(spec), used(before));
        for port in spec.ports.iter_mut().flatten() {
            if port.node_port.unwrap_or(0) != 0 {
                continue;
            }
            let stored = before
                .ports
                .iter()
                .flatten()
                .find(|p| p.name == port.name)
                .and_then(|p| p.node_port)
                .filter(|n| !(new_used.contains(n) && old_used.contains(n)));
            if stored.is_some() {
                port.node_port = stored;
            }
        }
    }
    let health_check = |type_: &str, spec: &ServiceSpec| {
        type_ == "LoadBalancer" && spec.external_traffic_policy.as_deref() == Some("Local")
    };
    if health_check(&new_type, spec)
        && health_check(&old_type, before)
        && spec.health_check_node_port.unwrap_or(0) == 0
    {
        spec.health_check_node_port = before.health_check_node_port;
    }
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
