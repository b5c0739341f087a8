//! The `kubectl get services` row (kube-apiserver's `printService`).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::Service;

/// Cells for Type, Cluster-IP, External-IP, Port(s), Age and Selector.
pub(super) fn service_cells(svc: &Service) -> Vec<Value> {
    let spec = &svc.spec;
    let cluster_ip = spec
        .cluster_ips
        .iter()
        .flatten()
        .next()
        .or(spec.cluster_ip.as_ref())
        .filter(|ip| !ip.is_empty())
        .map_or("<none>", String::as_str);
    vec![
        json!(spec.type_.as_deref().unwrap_or_default()),
        json!(cluster_ip),
        json!(external_ip(svc)),
        json!(ports(svc)),
        json!(svc.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(crate::labels::format_labels(spec.selector.as_ref())),
    ]
}

/// External addresses by type: external IPs, load balancer ingress, or the
/// external name.
fn external_ip(svc: &Service) -> String {
    let spec = &svc.spec;
    let external: Vec<String> = spec.external_ips.clone().unwrap_or_default();
    match spec.type_.as_deref().unwrap_or_default() {
        "ClusterIP" | "NodePort" if external.is_empty() => "<none>".to_owned(),
        "ClusterIP" | "NodePort" => external.join(","),
        "LoadBalancer" => {
            let ingress = svc.status.load_balancer.ingress.iter().flatten();
            let lb: BTreeSet<&str> = ingress
                .filter_map(|i| {
                    let ip = i.ip.as_deref().filter(|ip| !ip.is_empty());
                    ip.or(i.hostname.as_deref().filter(|h| !h.is_empty()))
                })
                .collect();
            let all: Vec<String> = lb.into_iter().map(str::to_owned).chain(external).collect();
            if all.is_empty() {
                "<pending>".to_owned()
            } else {
                all.join(",")
            }
        }
        "ExternalName" => spec.external_name.clone().unwrap_or_default(),
        _ => "<unknown>".to_owned(),
    }
}

/// `80/TCP,443:30443/TCP`, or `<none>`.
fn ports(svc: &Service) -> String {
    let ports: Vec<String> = svc
        .spec
        .ports
        .iter()
        .flatten()
        .map(|p| {
            let protocol = p.protocol.as_deref().unwrap_or_default();
            match p.node_port.filter(|n| *n > 0) {
                Some(node_port) => format!("{}:{node_port}/{protocol}", p.port),
                None => format!("{}/{protocol}", p.port),
            }
        })
        .collect();
    if ports.is_empty() {
        "<none>".to_owned()
    } else {
        ports.join(",")
    }
}
