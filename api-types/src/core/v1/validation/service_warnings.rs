//! The `Warning` headers of a service write (upstream's
//! `GetWarningsForService`): addresses that only the lenient parser accepts
//! (IPv4 octets with leading zeros, which a later release refuses), IPv6
//! addresses and prefixes not written as RFC 5952 does, and fields the
//! service's type ignores.

use std::net::IpAddr;

use super::ip_sloppy::parse_ip_sloppy;
use crate::core::v1::service::Service;

/// The annotation replaced by `service.kubernetes.io/topology-mode`.
const TOPOLOGY_HINTS: &str = "service.kubernetes.io/topology-aware-hints";

/// Go's `netip.ParseAddr` error for an address the lenient parser took (its
/// only refusal of those is a leading zero).
fn parse_addr_error(text: &str) -> String {
    format!("ParseAddr({text:?}): IPv4 field has octet with leading zero")
}

/// An address's warning, if any.
fn ip_warning(field: &str, text: &str) -> Option<String> {
    match text.parse::<IpAddr>() {
        Err(_) if parse_ip_sloppy(text).is_some() => Some(format!(
            "{field}: IP address was accepted, but will be invalid in a future Kubernetes \
             release: {}",
            parse_addr_error(text)
        )),
        Ok(IpAddr::V6(v6)) if v6.to_string() != text => Some(format!(
            "{field}: IPv6 address {text:?} is not in RFC 5952 canonical format ({:?}), which \
             may cause controller apply-loops",
            v6.to_string()
        )),
        _ => None,
    }
}

/// A source range's warning, if any.
fn cidr_warning(field: &str, text: &str) -> Option<String> {
    let (addr, bits) = text.split_once('/')?;
    match addr.parse::<IpAddr>() {
        Err(_) if parse_ip_sloppy(addr).is_some() => Some(format!(
            "{field}: IP prefix was accepted, but will be invalid in a future Kubernetes \
             release: netip.ParsePrefix({text:?}): {}",
            parse_addr_error(addr)
        )),
        Ok(IpAddr::V6(v6)) if format!("{v6}/{bits}") != text => Some(format!(
            "{field}: IPv6 prefix {text:?} is not in RFC 5952 canonical format (\"{v6}/{bits}\"), \
             which may cause controller apply-loops"
        )),
        _ => None,
    }
}

/// The `Service` warnings hook, the same on create and update.
pub(crate) fn service_warnings(svc: &Service, _old: Option<&Service>) -> Vec<String> {
    let mut warnings = Vec::new();
    let spec = &svc.spec;
    if svc
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(TOPOLOGY_HINTS))
    {
        warnings.push(format!(
            "annotation {TOPOLOGY_HINTS} is deprecated, please use \
             service.kubernetes.io/topology-mode instead"
        ));
    }
    let ip_set = !matches!(spec.cluster_ip.as_deref(), None | Some("" | "None"));
    if ip_set {
        for (i, ip) in spec.cluster_ips.iter().flatten().enumerate() {
            warnings.extend(ip_warning(&format!("spec.clusterIPs[{i}]"), ip));
        }
    }
    for (i, ip) in spec.external_ips.iter().flatten().enumerate() {
        warnings.extend(ip_warning(&format!("spec.externalIPs[{i}]"), ip));
    }
    if let Some(ip) = spec.load_balancer_ip.as_deref().filter(|ip| !ip.is_empty()) {
        warnings.extend(ip_warning("spec.loadBalancerIP", ip));
    }
    for (i, range) in spec
        .load_balancer_source_ranges
        .iter()
        .flatten()
        .enumerate()
    {
        warnings.extend(cidr_warning(
            &format!("spec.loadBalancerSourceRanges[{i}]"),
            range,
        ));
    }
    let type_ = spec.type_.as_deref().unwrap_or_default();
    let has_external_ips = spec.external_ips.as_ref().is_some_and(|l| !l.is_empty());
    if type_ == "ExternalName" && has_external_ips {
        warnings.push("spec.externalIPs is ignored when spec.type is \"ExternalName\"".to_owned());
    }
    let has_external_name = spec.external_name.as_ref().is_some_and(|n| !n.is_empty());
    if type_ != "ExternalName" && has_external_name {
        warnings
            .push("spec.externalName is ignored when spec.type is not \"ExternalName\"".to_owned());
    }
    warnings
}
