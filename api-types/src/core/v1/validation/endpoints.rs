//! `ValidateEndpoints`: each subset has addresses, every address is a usable
//! IP (not loopback, link-local, multicast or unspecified) with a valid
//! hostname and node name, and every port is valid and named when the subset
//! has several. An update is checked as a create (the node name of an
//! address may change).

use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1123_label_errors, dns1123_subdomain_errors, port_number_errors,
    qualified_name_errors,
};

use super::ip_sloppy::parse_ip_sloppy;
use crate::core::v1::endpoints::{EndpointAddress, EndpointPort, EndpointSubset};

/// The `EndpointSubset` hook.
pub(crate) fn validate_endpoint_subset(
    subset: &EndpointSubset,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let ready = subset.addresses.as_deref().unwrap_or_default();
    let not_ready = subset.not_ready_addresses.as_deref().unwrap_or_default();
    if ready.is_empty() && not_ready.is_empty() {
        errs.required(
            path.clone(),
            "must specify `addresses` or `notReadyAddresses`",
        );
    }
    for (name, list) in [("addresses", ready), ("notReadyAddresses", not_ready)] {
        for (i, address) in list.iter().enumerate() {
            endpoint_address(address, &path.child(name).index(i), errs);
        }
    }
    let ports = subset.ports.as_deref().unwrap_or_default();
    for (i, port) in ports.iter().enumerate() {
        endpoint_port(port, ports.len() > 1, &path.child("ports").index(i), errs);
    }
}

/// `validateEndpointAddress`.
fn endpoint_address(address: &EndpointAddress, path: &FieldPath, errs: &mut FieldErrors) {
    let ip_path = path.child("ip");
    let ip = address.ip.as_str();
    let parsed = parse_ip_sloppy(ip);
    if parsed.is_none() {
        errs.invalid(
            ip_path.clone(),
            ip,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        );
    }
    if let Some(hostname) = address.hostname.as_deref().filter(|h| !h.is_empty()) {
        for detail in dns1123_label_errors(hostname) {
            errs.invalid(path.child("hostname"), hostname, &detail);
        }
    }
    if let Some(node) = &address.node_name {
        for detail in dns1123_subdomain_errors(node) {
            errs.invalid(path.child("nodeName"), node.as_str(), &detail);
        }
    }
    match parsed {
        Some(addr) => crate::validation::special_ip(addr, ip, &ip_path, errs),
        None => errs.invalid(ip_path, ip, "must be a valid IP address"),
    }
}

/// `validateEndpointPort`.
fn endpoint_port(
    port: &EndpointPort,
    require_name: bool,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let name = port.name.as_deref().unwrap_or_default();
    if require_name && name.is_empty() {
        errs.required(path.child("name"), "");
    } else if !name.is_empty() {
        for detail in dns1123_label_errors(name) {
            errs.invalid(path.child("name"), name, &detail);
        }
    }
    for detail in port_number_errors(i64::from(port.port)) {
        errs.invalid(path.child("port"), port.port, &detail);
    }
    match port.protocol.as_deref().unwrap_or_default() {
        "" => errs.required(path.child("protocol"), ""),
        "TCP" | "UDP" | "SCTP" => {}
        other => errs.not_supported(path.child("protocol"), other, &["SCTP", "TCP", "UDP"]),
    }
    if let Some(app) = &port.app_protocol {
        for detail in qualified_name_errors(app) {
            errs.invalid(path.child("appProtocol"), app.as_str(), &detail);
        }
    }
}
