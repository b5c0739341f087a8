//! The checks of pkg/apis/discovery/validation for EndpointSlices, as
//! kube-apiserver 1.32 answers them: the endpoints' addresses, host and node
//! names, and the ports. Zones, hints, topology and target references are
//! not checked; neither are port numbers.

use std::collections::BTreeSet;
use std::net::IpAddr;

use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1123_label_errors, dns1123_subdomain_errors, qualified_name_errors,
};

use super::endpointslice::{Endpoint, EndpointPort, EndpointSlice};
use crate::validation::{dns1123_subdomain, special_ip};

const MAX_ENDPOINTS: usize = 1000;
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 100;
/// The address types a slice may be created with (`IP` is only kept by
/// updates of old slices).
const ADDRESS_TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];

/// The `EndpointSlice` hook (`ValidateEndpointSlice`). An empty address type
/// is the field rule's `Required`.
pub(crate) fn validate_endpoint_slice(
    slice: &EndpointSlice,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let address_type = slice.address_type.as_str();
    if !address_type.is_empty() && !ADDRESS_TYPES.contains(&address_type) {
        errs.not_supported(path.child("addressType"), address_type, ADDRESS_TYPES);
    }
    let endpoints = slice.endpoints.as_deref().unwrap_or_default();
    let endpoints_path = path.child("endpoints");
    if endpoints.len() > MAX_ENDPOINTS {
        errs.too_many(endpoints_path, endpoints.len(), MAX_ENDPOINTS);
    } else {
        for (i, endpoint) in endpoints.iter().enumerate() {
            validate_endpoint(endpoint, address_type, &endpoints_path.index(i), errs);
        }
    }
    ports(
        slice.ports.as_deref().unwrap_or_default(),
        &path.child("ports"),
        errs,
    );
}

/// One endpoint of `validateEndpoints`.
fn validate_endpoint(
    endpoint: &Endpoint,
    address_type: &str,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let addresses = endpoint.addresses.as_deref().unwrap_or_default();
    let addresses_path = path.child("addresses");
    if addresses.is_empty() {
        errs.required(addresses_path.clone(), "must contain at least 1 address");
    } else if addresses.len() > MAX_ADDRESSES {
        errs.too_many(addresses_path.clone(), addresses.len(), MAX_ADDRESSES);
    }
    for (i, address) in addresses.iter().enumerate() {
        address_of_type(address, address_type, &addresses_path.index(i), errs);
    }
    if let Some(node) = &endpoint.node_name {
        dns1123_subdomain(node, &path.child("nodeName"), errs);
    }
    if let Some(host) = &endpoint.hostname {
        for detail in dns1123_label_errors(host) {
            errs.invalid(path.child("hostname"), host.as_str(), &detail);
        }
    }
}

/// An address checked as its slice's type says; an unknown type's addresses
/// are not checked.
fn address_of_type(address: &str, address_type: &str, path: &FieldPath, errs: &mut FieldErrors) {
    let parsed = address.parse::<IpAddr>().ok();
    // Go's `To4` also reads an IPv4-mapped IPv6 address as IPv4.
    let v4 = |ip: &IpAddr| match ip {
        IpAddr::V4(_) => true,
        IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some(),
    };
    match address_type {
        "IPv4" | "IPv6" => {
            let family_ok = parsed
                .as_ref()
                .is_some_and(|ip| v4(ip) == (address_type == "IPv4"));
            if !family_ok {
                let detail = format!("must be a valid {address_type} address");
                errs.invalid(path.clone(), address, &detail);
            }
            match parsed {
                Some(ip) => special_ip(ip, address, path, errs),
                None => errs.invalid(path.clone(), address, "must be a valid IP address"),
            }
        }
        "FQDN" => fqdn(address, path, errs),
        _ => {}
    }
}

/// `IsFullyQualifiedDomainName`: a DNS subdomain of at least two labels
/// (a trailing dot allowed).
fn fqdn(name: &str, path: &FieldPath, errs: &mut FieldErrors) {
    if name.is_empty() {
        errs.required(path.clone(), "");
        return;
    }
    let trimmed = name.strip_suffix('.').unwrap_or(name);
    for detail in dns1123_subdomain_errors(trimmed) {
        errs.invalid(path.clone(), name, &detail);
    }
    if !trimmed.contains('.') {
        errs.invalid(
            path.clone(),
            name,
            "should be a domain with at least two segments separated by dots",
        );
    }
}

/// `validatePorts`: named by DNS labels, each name (even empty) once, a
/// known protocol, a qualified application protocol.
fn ports(ports: &[EndpointPort], path: &FieldPath, errs: &mut FieldErrors) {
    if ports.len() > MAX_PORTS {
        errs.too_many(path.clone(), ports.len(), MAX_PORTS);
        return;
    }
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let item = path.index(i);
        let name = port.name.as_deref().unwrap_or_default();
        if !name.is_empty() {
            for detail in dns1123_label_errors(name) {
                errs.invalid(item.child("name"), name, &detail);
            }
        }
        if !names.insert(name) {
            errs.duplicate(item.child("name"), name);
        }
        match port.protocol.as_deref() {
            None => errs.required(item.child("protocol"), ""),
            Some("TCP" | "UDP" | "SCTP") => {}
            Some(other) => {
                errs.not_supported(item.child("protocol"), other, &["SCTP", "TCP", "UDP"])
            }
        }
        if let Some(app) = &port.app_protocol {
            for detail in qualified_name_errors(app) {
                errs.invalid(item.child("appProtocol"), app.as_str(), &detail);
            }
        }
    }
}

/// The `EndpointSlice` update hook: the address type is immutable, and a
/// slice that had the deprecated `IP` type may keep it.
pub(crate) fn validate_endpoint_slice_update(
    new: &EndpointSlice,
    old: &EndpointSlice,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let type_path = path.child("addressType");
    if new.address_type == "IP" {
        errs.0
            .retain(|e| !(e.path == type_path && e.message.starts_with("Unsupported value")));
    }
    if new.address_type != old.address_type {
        errs.invalid(type_path, new.address_type.as_str(), "field is immutable");
    }
}
