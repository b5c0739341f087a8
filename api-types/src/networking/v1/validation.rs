//! The checks of pkg/apis/networking/validation for Ingresses and
//! NetworkPolicies.

use std::net::IpAddr;

use kapi_runtime::IntOrString;
use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1035_label_errors, dns1123_subdomain_errors, port_name_errors,
    port_number_errors,
};

use super::ingress::{HTTPIngressPath, IngressBackend, IngressSpec};
use super::networkpolicy::{IPBlock, NetworkPolicyPeer, NetworkPolicyPort, NetworkPolicySpec};
use crate::validation::{cidr, dns1123_subdomain, validate_label_selector};

const WILDCARD_RULE: &str = "a wildcard DNS-1123 subdomain must start with '*.', followed by a \
     valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' \
     and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is \
     '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// A host name, or a `*.` wildcard over one (`IsWildcardDNS1123Subdomain`).
fn host(value: &str, path: &FieldPath, errs: &mut FieldErrors) {
    if value.contains('*') {
        if value.len() > 253 {
            errs.invalid(path.clone(), value, "must be no more than 253 characters");
        }
        let rest = value.strip_prefix("*.");
        if rest.is_none_or(|r| !dns1123_subdomain_errors(r).is_empty()) {
            errs.invalid(path.clone(), value, WILDCARD_RULE);
        }
    } else {
        dns1123_subdomain(value, path, errs);
    }
}

/// The `IngressSpec` hook (`ValidateIngressSpec`).
pub(crate) fn validate_ingress_spec(spec: &IngressSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let rules = spec.rules.as_deref().unwrap_or_default();
    if rules.is_empty() && spec.default_backend.is_none() {
        errs.invalid(
            path.clone(),
            crate::validation::Raw("[]networking.IngressRule(nil)"),
            "either `defaultBackend` or `rules` must be specified",
        );
    }
    if let Some(backend) = &spec.default_backend {
        ingress_backend(backend, &path.child("defaultBackend"), errs);
    }
    for (i, rule) in rules.iter().enumerate() {
        let item = path.child("rules").index(i);
        let name = rule.host.as_deref().unwrap_or_default();
        if !name.is_empty() {
            if name.parse::<IpAddr>().is_ok() {
                errs.invalid(
                    item.child("host"),
                    name,
                    "must be a DNS name, not an IP address",
                );
            }
            host(name, &item.child("host"), errs);
        }
        if let Some(http) = &rule.http {
            let paths_path = item.child("http").child("paths");
            let paths = http.paths.as_deref().unwrap_or_default();
            if paths.is_empty() {
                errs.required(paths_path.clone(), "");
            }
            for (j, p) in paths.iter().enumerate() {
                http_path(p, &paths_path.index(j), errs);
            }
        }
    }
    for (i, tls) in spec.tls.iter().flatten().enumerate() {
        let item = path.child("tls").index(i);
        for (j, name) in tls.hosts.iter().flatten().enumerate() {
            host(name, &item.child("hosts").index(j), errs);
        }
        let secret = tls.secret_name.as_deref().unwrap_or_default();
        if !secret.is_empty() {
            dns1123_subdomain(secret, &item.child("secretName"), errs);
        }
    }
    if let Some(class) = &spec.ingress_class_name {
        dns1123_subdomain(class, &path.child("ingressClassName"), errs);
    }
}

/// `validateHTTPIngressPath`.
fn http_path(p: &HTTPIngressPath, path: &FieldPath, errs: &mut FieldErrors) {
    let Some(path_type) = p.path_type.as_deref() else {
        errs.required(path.child("pathType"), "pathType must be specified");
        return;
    };
    let value = p.path.as_deref().unwrap_or_default();
    let value_path = path.child("path");
    match path_type {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errs.invalid(value_path.clone(), value, "must be an absolute path");
            }
            for seq in ["//", "/./", "/../", "%2f", "%2F"] {
                if value.contains(seq) {
                    errs.invalid(
                        value_path.clone(),
                        value,
                        &format!("must not contain '{seq}'"),
                    );
                }
            }
            for suffix in ["/..", "/."] {
                if value.ends_with(suffix) {
                    errs.invalid(
                        value_path.clone(),
                        value,
                        &format!("cannot end with '{suffix}'"),
                    );
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errs.invalid(value_path, value, "must be an absolute path");
            }
        }
        other => errs.not_supported(
            path.child("pathType"),
            other,
            &["Exact", "ImplementationSpecific", "Prefix"],
        ),
    }
    ingress_backend(&p.backend, &path.child("backend"), errs);
}

/// `validateIngressBackend`: exactly one of a service (named, with a port
/// name or number) and a resource.
fn ingress_backend(backend: &IngressBackend, path: &FieldPath, errs: &mut FieldErrors) {
    match (&backend.service, &backend.resource) {
        (Some(_), Some(_)) => errs.invalid(
            path.clone(),
            "",
            "cannot set both resource and service backends",
        ),
        (None, None) => errs.invalid(path.clone(), "", "resource or service backend is required"),
        (None, Some(_)) => {}
        (Some(service), None) => {
            let service_path = path.child("service");
            // An empty name is the field rule's `Required`.
            if !service.name.is_empty() {
                for detail in dns1035_label_errors(&service.name) {
                    errs.invalid(service_path.child("name"), service.name.as_str(), &detail);
                }
            }
            let port = &service.port;
            let name = port.name.as_deref().unwrap_or_default();
            let number = port.number.unwrap_or_default();
            let port_path = service_path.child("port");
            match (name.is_empty(), number == 0) {
                (false, false) => {
                    errs.invalid(path.clone(), "", "cannot set both port name & port number")
                }
                (false, true) => {
                    for detail in port_name_errors(name) {
                        errs.invalid(port_path.child("name"), name, &detail);
                    }
                }
                (true, false) => {
                    for detail in port_number_errors(i64::from(number)) {
                        errs.invalid(port_path.child("number"), number, &detail);
                    }
                }
                (true, true) => errs.required(path.clone(), "port name or number is required"),
            }
        }
    }
}

/// The `NetworkPolicySpec` hook (`ValidateNetworkPolicySpec`).
pub(crate) fn validate_network_policy_spec(
    spec: &NetworkPolicySpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    validate_label_selector(&spec.pod_selector, &path.child("podSelector"), errs);
    for (i, rule) in spec.ingress.iter().flatten().enumerate() {
        let item = path.child("ingress").index(i);
        for (j, port) in rule.ports.iter().flatten().enumerate() {
            policy_port(port, &item.child("ports").index(j), errs);
        }
        for (j, peer) in rule.from.iter().flatten().enumerate() {
            policy_peer(peer, &item.child("from").index(j), errs);
        }
    }
    for (i, rule) in spec.egress.iter().flatten().enumerate() {
        let item = path.child("egress").index(i);
        for (j, peer) in rule.to.iter().flatten().enumerate() {
            policy_peer(peer, &item.child("to").index(j), errs);
        }
        for (j, port) in rule.ports.iter().flatten().enumerate() {
            policy_port(port, &item.child("ports").index(j), errs);
        }
    }
    let types = spec.policy_types.as_deref().unwrap_or_default();
    if types.len() > 2 {
        errs.invalid(
            path.child("policyTypes"),
            crate::validation::GoStrings(Some(types)),
            "may not specify more than two policyTypes",
        );
        return;
    }
    for (i, t) in types.iter().enumerate() {
        if !matches!(t.as_str(), "Ingress" | "Egress") {
            errs.not_supported(
                path.child("policyTypes").index(i),
                t,
                &["Ingress", "Egress"],
            );
        }
    }
}

/// `ValidateNetworkPolicyPort`.
fn policy_port(port: &NetworkPolicyPort, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(protocol) = port.protocol.as_deref()
        && !matches!(protocol, "TCP" | "UDP" | "SCTP")
    {
        errs.not_supported(path.child("protocol"), protocol, &["TCP", "UDP", "SCTP"]);
    }
    let end_path = path.child("endPort");
    match &port.port {
        Some(IntOrString::Int(n)) => {
            for detail in port_number_errors(i64::from(*n)) {
                errs.invalid(path.child("port"), n, &detail);
            }
            if let Some(end) = port.end_port {
                if end < *n {
                    // Upstream shows the port, not the end port.
                    errs.invalid(
                        end_path.clone(),
                        n,
                        "must be greater than or equal to `port`",
                    );
                }
                for detail in port_number_errors(i64::from(end)) {
                    errs.invalid(end_path.clone(), end, &detail);
                }
            }
        }
        Some(IntOrString::String(name)) => {
            if let Some(end) = port.end_port {
                errs.invalid(
                    end_path,
                    end,
                    "may not be specified when `port` is non-numeric",
                );
            }
            for detail in port_name_errors(name) {
                errs.invalid(path.child("port"), name.as_str(), &detail);
            }
        }
        None => {
            if let Some(end) = port.end_port {
                errs.invalid(
                    end_path,
                    end,
                    "may not be specified when `port` is not specified",
                );
            }
        }
    }
}

/// `ValidateNetworkPolicyPeer`: one kind of peer, an IP block alone.
fn policy_peer(peer: &NetworkPolicyPeer, path: &FieldPath, errs: &mut FieldErrors) {
    let mut peers = 0;
    if let Some(selector) = &peer.pod_selector {
        peers += 1;
        validate_label_selector(selector, &path.child("podSelector"), errs);
    }
    if let Some(selector) = &peer.namespace_selector {
        peers += 1;
        validate_label_selector(selector, &path.child("namespaceSelector"), errs);
    }
    if let Some(block) = &peer.ip_block {
        peers += 1;
        ip_block(block, &path.child("ipBlock"), errs);
    }
    if peers == 0 {
        errs.required(path.clone(), "must specify a peer");
    } else if peers > 1 && peer.ip_block.is_some() {
        errs.forbidden(
            path.clone(),
            "may not specify both ipBlock and another peer",
        );
    }
}

/// An address and prefix length, when `value` is a CIDR.
fn parse_cidr(value: &str) -> Option<(IpAddr, u32)> {
    let (addr, bits) = value.split_once('/')?;
    let addr: IpAddr = addr.parse().ok()?;
    let bits: u32 = bits.parse().ok()?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    (bits <= max).then_some((addr, bits))
}

/// Whether `addr` lies in `net/bits`.
fn contains(net: IpAddr, bits: u32, addr: IpAddr) -> bool {
    let (net, addr, width) = match (net, addr) {
        (IpAddr::V4(n), IpAddr::V4(a)) => (u128::from(u32::from(n)), u128::from(u32::from(a)), 32),
        (IpAddr::V6(n), IpAddr::V6(a)) => (u128::from(n), u128::from(a), 128),
        _ => return false,
    };
    let shift = width - bits;
    shift >= 128 || (net >> shift) == (addr >> shift)
}

/// `ValidateIPBlock`: a CIDR, and exceptions strictly inside it. (An empty
/// CIDR is the field rule's `Required`.)
fn ip_block(block: &IPBlock, path: &FieldPath, errs: &mut FieldErrors) {
    if block.cidr.is_empty() {
        return;
    }
    cidr(&block.cidr, &path.child("cidr"), errs);
    let Some((net, bits)) = parse_cidr(&block.cidr) else {
        return;
    };
    for (i, except) in block.except.iter().flatten().enumerate() {
        let except_path = path.child("except").index(i);
        cidr(except, &except_path, errs);
        if let Some((addr, except_bits)) = parse_cidr(except)
            && (!contains(net, bits, addr) || bits >= except_bits)
        {
            errs.invalid(
                except_path,
                except.as_str(),
                "must be a strict subset of `cidr`",
            );
        }
    }
}
