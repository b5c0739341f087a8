//! `ValidateService` and `ValidateServiceUpdate`.

use std::collections::BTreeSet;
use std::net::IpAddr;

use kapi_runtime::validation::{FieldErrors, FieldPath, port_number_errors, qualified_name_errors};

use super::ip_sloppy::{parse_ip_sloppy, sloppy_cidr};
use crate::core::v1::service::{Service, ServicePort, ServiceSpec};
use crate::validation::{GoStrings, Raw, dns1123_subdomain, port_num_or_name, validate_labels};

/// The kubelet's port, which a load balancer may not expose.
const KUBELET_PORT: i32 = 10250;
/// The longest `ClientIP` session affinity (a day).
const MAX_CLIENT_IP_SECONDS: i32 = 86400;

fn text(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or_default()
}

fn is_headless(spec: &ServiceSpec) -> bool {
    text(&spec.cluster_ip) == "None"
}

/// The `ServiceSpec` hook.
pub(crate) fn validate_service_spec(spec: &ServiceSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let type_ = text(&spec.type_);
    let ports = spec.ports.as_deref().unwrap_or_default();
    let ports_path = path.child("ports");
    if ports.is_empty() && !is_headless(spec) && type_ != "ExternalName" {
        errs.required(ports_path.clone(), "");
    }
    let first_ip = path.child("clusterIPs").index(0);
    match type_ {
        "LoadBalancer" | "NodePort" if is_headless(spec) => {
            let detail = format!("may not be set to 'None' for {type_} services");
            errs.invalid(first_ip, "None", &detail);
        }
        "ExternalName" => external_name(spec, path, errs),
        _ => {}
    }
    if type_ == "LoadBalancer" {
        for (i, port) in ports.iter().enumerate() {
            if port.port == KUBELET_PORT {
                let detail = format!(
                    "may not expose port {KUBELET_PORT} externally since it is used by kubelet"
                );
                errs.invalid(ports_path.index(i), port.port, &detail);
            }
        }
    }
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        service_port(
            port,
            ports.len() > 1,
            &mut names,
            &ports_path.index(i),
            errs,
        );
    }
    validate_labels(spec.selector.as_ref(), &path.child("selector"), errs);
    if text(&spec.session_affinity) == "ClientIP"
        && let Some(seconds) = spec
            .session_affinity_config
            .as_ref()
            .and_then(|c| c.client_ip.as_ref())
            .and_then(|c| c.timeout_seconds)
        && !(1..=MAX_CLIENT_IP_SECONDS).contains(&seconds)
    {
        let config_path = path.child("sessionAffinityConfig").child("clientIP");
        let detail = format!("must be greater than 0 and less than {MAX_CLIENT_IP_SECONDS}");
        errs.invalid(config_path.child("timeoutSeconds"), seconds, &detail);
    }
    for (i, ip) in spec.external_ips.iter().flatten().enumerate() {
        external_ip(ip, &path.child("externalIPs").index(i), errs);
    }
    duplicate_ports(ports, type_, &ports_path, errs);
    let not_lb = type_ != "LoadBalancer";
    let ranges = spec
        .load_balancer_source_ranges
        .as_deref()
        .unwrap_or_default();
    // Upstream names this path in Go's spelling.
    let ranges_path = path.child("LoadBalancerSourceRanges");
    if not_lb && !ranges.is_empty() {
        errs.forbidden(
            ranges_path.clone(),
            "may only be used when `type` is 'LoadBalancer'",
        );
    } else {
        for (i, range) in ranges.iter().enumerate() {
            // Blanks around a range are tolerated (it once came from an
            // annotation).
            sloppy_cidr(range.trim(), &ranges_path.index(i), errs);
        }
    }
    if type_ != "ExternalName" {
        cluster_ips(spec, path, errs);
    }
    if not_lb && spec.allocate_load_balancer_node_ports.is_some() {
        errs.forbidden(
            path.child("allocateLoadBalancerNodePorts"),
            "may only be used when `type` is 'LoadBalancer'",
        );
    }
    traffic_policies(spec, path, errs);
}

/// `ExternalName` services: a DNS name (a trailing dot allowed), no cluster IP.
fn external_name(spec: &ServiceSpec, path: &FieldPath, errs: &mut FieldErrors) {
    if spec.cluster_ips.as_ref().is_some_and(|ips| !ips.is_empty()) {
        errs.forbidden(
            path.child("clusterIPs"),
            "may not be set for ExternalName services",
        );
    }
    if spec.ip_families.as_ref().is_some_and(|f| !f.is_empty()) {
        errs.forbidden(
            path.child("ipFamilies"),
            "may not be set for ExternalName services",
        );
    }
    if spec.ip_family_policy.is_some() {
        errs.forbidden(
            path.child("ipFamilyPolicy"),
            "may not be set for ExternalName services",
        );
    }
    let name = text(&spec.external_name);
    let name = name.strip_suffix('.').unwrap_or(name);
    if name.is_empty() {
        errs.required(path.child("externalName"), "");
    } else {
        dns1123_subdomain(name, &path.child("externalName"), errs);
    }
}

/// `validateServiceClusterIPsRelatedFields`: `clusterIPs` in step with
/// `clusterIP`, known and distinct IP families, addresses (or `None` alone),
/// at most one per family and each of the family `ipFamilies` gives it; and
/// the allocator's rule that two families need a dual-stack policy (it needs
/// no allocation).
fn cluster_ips(spec: &ServiceSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let ips = spec.cluster_ips.as_deref().unwrap_or_default();
    let ips_path = path.child("clusterIPs");
    let value = GoStrings(spec.cluster_ips.as_deref());
    if !text(&spec.cluster_ip).is_empty() {
        match ips.first() {
            None => errs.required(ips_path.clone(), ""),
            Some(first) if first != text(&spec.cluster_ip) => errs.invalid(
                ips_path.clone(),
                &value,
                "first value must match `clusterIP`",
            ),
            Some(_) => {}
        }
    } else if !ips.is_empty() {
        errs.invalid(
            ips_path.clone(),
            &value,
            "must be empty when `clusterIP` is not specified",
        );
    }
    let families = spec.ip_families.as_deref().unwrap_or_default();
    let families_path = path.child("ipFamilies");
    let mut seen = BTreeSet::new();
    for (i, family) in families.iter().enumerate() {
        if family != "IPv4" && family != "IPv6" {
            errs.not_supported(families_path.index(i), family, &["IPv4", "IPv6"]);
        }
        if !seen.insert(family.as_str()) {
            errs.duplicate(families_path.index(i), family.as_str());
        }
    }
    if families.len() > 1 && text(&spec.ip_family_policy) == "SingleStack" {
        errs.invalid(
            path.child("ipFamilyPolicy"),
            "SingleStack",
            "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are \
             specified",
        );
    }
    let mut bad_ips = false;
    for (i, ip) in ips.iter().enumerate() {
        if i == 0 && ip == "None" {
            if ips.len() > 1 {
                bad_ips = true;
                errs.invalid(
                    ips_path.clone(),
                    &value,
                    "'None' must be the first and only value",
                );
            }
            continue;
        }
        if parse_ip_sloppy(ip).is_none() {
            bad_ips = true;
            errs.invalid(
                ips_path.index(i),
                ip.as_str(),
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            );
        }
    }
    if ips.len() > 2 {
        errs.invalid(ips_path.clone(), &value, "may only hold up to 2 values");
    }
    // Further checks would only restate a bad address.
    if bad_ips {
        return;
    }
    let is_v6 = |ip: &String| matches!(parse_ip_sloppy(ip), Some(IpAddr::V6(_)));
    let v6_count = ips.iter().filter(|ip| is_v6(ip)).count();
    if ips.len() > 1 && (v6_count == 0 || v6_count == ips.len()) {
        errs.invalid(
            ips_path.clone(),
            &value,
            "may specify no more than one IP for each IP family",
        );
    }
    if is_headless(spec) {
        return;
    }
    for (i, (ip, family)) in ips.iter().zip(families).enumerate() {
        let wanted = match (family.as_str(), is_v6(ip)) {
            ("IPv4", true) => "IPv4",
            ("IPv6", false) => "IPv6",
            _ => continue,
        };
        let detail = format!("expected an {wanted} value as indicated by `ipFamilies[{i}]`");
        errs.invalid(ips_path.index(i), ip.as_str(), &detail);
    }
}

/// `validateServicePort`: names (required when there are several, unique),
/// port number, protocol, target port and application protocol.
fn service_port<'a>(
    port: &'a ServicePort,
    require_name: bool,
    names: &mut BTreeSet<&'a str>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let name = text(&port.name);
    if require_name && name.is_empty() {
        errs.required(path.child("name"), "");
    } else if !name.is_empty() && !names.insert(name) {
        // The name's syntax is the field rule's.
        errs.duplicate(path.child("name"), name);
    }
    for detail in port_number_errors(i64::from(port.port)) {
        errs.invalid(path.child("port"), port.port, &detail);
    }
    match text(&port.protocol) {
        "" => errs.required(path.child("protocol"), ""),
        "TCP" | "UDP" | "SCTP" => {}
        other => errs.not_supported(path.child("protocol"), other, &["SCTP", "TCP", "UDP"]),
    }
    if let Some(target) = &port.target_port {
        port_num_or_name(target, &path.child("targetPort"), errs);
    }
    if let Some(app) = &port.app_protocol {
        for detail in qualified_name_errors(app) {
            errs.invalid(path.child("appProtocol"), app.as_str(), &detail);
        }
    }
}

/// `ValidateNonSpecialIP` with the message of `IsValidIP` for an address
/// that does not parse.
fn external_ip(ip: &str, path: &FieldPath, errs: &mut FieldErrors) {
    let Some(addr) = parse_ip_sloppy(ip) else {
        errs.invalid(
            path.clone(),
            ip,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        );
        return;
    };
    crate::validation::special_ip(addr, ip, path, errs);
}

/// Node ports only outside `ClusterIP` services; no two ports (or node ports)
/// with the same number and protocol.
fn duplicate_ports(ports: &[ServicePort], type_: &str, path: &FieldPath, errs: &mut FieldErrors) {
    let mut node_ports = BTreeSet::new();
    let mut service_ports = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let protocol = text(&port.protocol);
        let node_port = port.node_port.unwrap_or_default();
        if node_port != 0 {
            if type_ == "ClusterIP" {
                errs.forbidden(
                    path.index(i).child("nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                );
            }
            if !node_ports.insert((protocol, node_port)) {
                errs.duplicate(path.index(i).child("nodePort"), node_port);
            }
        }
        if !service_ports.insert((protocol, port.port)) {
            // Upstream prints the Go struct of the (protocol, port) key.
            let key = format!(
                "core.ServicePort{{Name:\"\", Protocol:{protocol:?}, AppProtocol:(*string)(nil), \
                 Port:{}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}",
                port.port
            );
            errs.duplicate(path.index(i), Raw(&key));
        }
    }
}

/// `validateServiceExternalTrafficPolicy` and the traffic fields' values.
fn traffic_policies(spec: &ServiceSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let type_ = text(&spec.type_);
    let has_external_ips = spec
        .external_ips
        .as_ref()
        .is_some_and(|ips| !ips.is_empty());
    let external =
        matches!(type_, "LoadBalancer" | "NodePort") || (type_ == "ClusterIP" && has_external_ips);
    let policy = text(&spec.external_traffic_policy);
    let policy_path = path.child("externalTrafficPolicy");
    if !external {
        if !policy.is_empty() {
            errs.invalid(
                policy_path,
                policy,
                "may only be set for externally-accessible services",
            );
        }
    } else if policy.is_empty() {
        errs.required(policy_path, "");
    } else if !matches!(policy, "Cluster" | "Local") {
        errs.not_supported(policy_path, policy, &["Cluster", "Local"]);
    }
    let needs_health_check = type_ == "LoadBalancer" && policy == "Local";
    let health_port = spec.health_check_node_port.unwrap_or_default();
    let health_path = path.child("healthCheckNodePort");
    if !needs_health_check && health_port != 0 {
        errs.invalid(
            health_path,
            health_port,
            "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
        );
    } else if needs_health_check && health_port != 0 {
        // Unset, the port is allocated by the registry, not checked here.
        for detail in port_number_errors(i64::from(health_port)) {
            errs.invalid(health_path.clone(), health_port, &detail);
        }
    }
    if let Some(distribution) = spec.traffic_distribution.as_deref()
        && distribution != "PreferClose"
    {
        errs.not_supported(
            path.child("trafficDistribution"),
            distribution,
            &["PreferClose"],
        );
    }
}

/// The `Service` update hook (`validateUpgradeDowngradeClusterIPs`): the
/// primary cluster IP may not change, a secondary one only be added or
/// released. A new object without cluster IPs is left alone: the registry
/// carries the allocated ones over before validation, as upstream's
/// `PrepareForUpdate` does.
pub(crate) fn validate_service_update(
    new: &Service,
    old: &Service,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let (new_spec, old_spec) = (&new.spec, &old.spec);
    if text(&new_spec.type_) == "ExternalName" || text(&old_spec.type_) == "ExternalName" {
        return;
    }
    if is_headless(new_spec) && is_headless(old_spec) {
        return;
    }
    let new_ips = new_spec.cluster_ips.as_deref().unwrap_or_default();
    let old_ips = old_spec.cluster_ips.as_deref().unwrap_or_default();
    if new_ips.is_empty() {
        return;
    }
    let ips_path = path.child("spec").child("clusterIPs");
    let value = GoStrings(new_spec.cluster_ips.as_deref());
    if new_ips.len() == old_ips.len() {
        for (i, (n, o)) in new_ips.iter().zip(old_ips).enumerate() {
            if n != o {
                errs.invalid(ips_path.index(i), &value, "may not change once set");
            }
        }
        return;
    }
    if !old_ips.is_empty() && new_ips[0] != old_ips[0] {
        errs.invalid(ips_path.index(0), &value, "may not change once set");
    }
    if new_ips.len() < old_ips.len()
        && new_ips.len() == 1
        && text(&new_spec.ip_family_policy) != "SingleStack"
    {
        errs.invalid(
            ips_path.index(0),
            &value,
            "`ipFamilyPolicy` must be set to 'SingleStack' when releasing the secondary clusterIP",
        );
    }
}
