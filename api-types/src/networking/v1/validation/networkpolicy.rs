//! `ValidateNetworkPolicySpec`: ports, peers and IP blocks.

use std::net::IpAddr;

use kapi_runtime::IntOrString;
use kapi_runtime::validation::{FieldErrors, FieldPath, port_name_errors, port_number_errors};

use super::super::networkpolicy::{
    IPBlock, NetworkPolicyPeer, NetworkPolicyPort, NetworkPolicySpec,
};
use crate::validation::{cidr, parse_cidr_sloppy, validate_label_selector};

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
            crate::validation::Raw(&go_policy_types(types)),
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
    let Some((net, bits, net_width)) = parse_cidr_sloppy(&block.cidr) else {
        return;
    };
    for (i, except) in block.except.iter().flatten().enumerate() {
        let except_path = path.child("except").index(i);
        cidr(except, &except_path, errs);
        if let Some((addr, except_bits, _)) = parse_cidr_sloppy(except)
            && (!contains(net, net_width, addr) || bits >= except_bits)
        {
            errs.invalid(
                except_path,
                except.as_str(),
                "must be a strict subset of `cidr`",
            );
        }
    }
}

/// Policy types as Go's `%#v` prints them: `[]networking.PolicyType{"Ingress"}`.
fn go_policy_types(types: &[String]) -> String {
    let quoted: Vec<String> = types.iter().map(|t| format!("{t:?}")).collect();
    format!("[]networking.PolicyType{{{}}}", quoted.join(", "))
}
