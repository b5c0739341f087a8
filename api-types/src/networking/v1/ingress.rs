//! Ingresses: HTTP(S) routes from outside the cluster to services, by host
//! and path, served by an ingress controller.

use std::collections::BTreeSet;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::v1::reference::TypedLocalObjectReference;
use crate::go_json::{null_as_default, omitempty};

/// Rules routing external HTTP(S) traffic to services, plus TLS settings; an
/// ingress controller of the named class implements them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "networking.k8s.io",
    version = "v1",
    plural = "ingresses",
    storage_prefix = "ingress",
    short_names("ing"),
    status,
    printer_column(name = "Class", type = "string", json_path = ".spec.ingressClassName",
        description = "IngressClass of the controller serving the ingress."),
    printer_column(name = "Hosts", type = "string", json_path = ".spec.rules",
        description = "Host names the rules match."),
    printer_column(name = "Address", type = "string", json_path = ".status.loadBalancer.ingress",
        description = "Addresses the load balancer serves the ingress on."),
    printer_column(name = "Ports", type = "string", json_path = ".spec.tls",
        description = "Ports the ingress is served on (443 only with TLS)."),
    table_cells = ingress_cells,
    validate_update = super::validation::ingress::validate_ingress_update,
    warnings = ingress_warnings
)]
#[api(validate = super::validation::ingress::validate_ingress)]
pub struct Ingress {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The routes and TLS settings wanted.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: IngressSpec,
    /// Where the ingress is served, as the controller reports it.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: IngressStatus,
}

/// What an ingress routes and how.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::ingress::validate_ingress_spec)]
pub struct IngressSpec {
    /// Name of the IngressClass whose controller serves this ingress; unset
    /// means the default class, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub ingress_class_name: Option<String>,
    /// Where requests that match no rule go; the controller decides when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub default_backend: Option<IngressBackend>,
    /// TLS settings, each for a set of hosts on port 443.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub tls: Option<Vec<IngressTLS>>,
    /// Routing rules, by host; with none, all traffic goes to the default
    /// backend.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub rules: Option<Vec<IngressRule>>,
}

/// TLS for a set of hosts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct IngressTLS {
    /// Host names the certificate covers; they must match the rules' hosts.
    /// Empty means the controller's default for wildcard certificates.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub hosts: Option<Vec<String>>,
    /// Secret in the ingress's namespace holding the certificate and key; may
    /// be empty when routing by SNI alone.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub secret_name: Option<String>,
}

/// The observed state of an ingress.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct IngressStatus {
    /// The load balancer in front of the ingress.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 1)]
    pub load_balancer: IngressLoadBalancerStatus,
}

/// The endpoints of the load balancer serving an ingress.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct IngressLoadBalancerStatus {
    /// The load balancer's addresses.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub ingress: Option<Vec<IngressLoadBalancerIngress>>,
}

/// One address of an ingress's load balancer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct IngressLoadBalancerIngress {
    /// IP address, for IP-based load balancers.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub ip: Option<String>,
    /// DNS name, for DNS-based load balancers.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub hostname: Option<String>,
    /// Ports of this address and their state.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub ports: Option<Vec<IngressPortStatus>>,
}

/// The state of one port of an ingress load balancer address.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct IngressPortStatus {
    /// Port number.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub port: i32,
    /// `TCP`, `UDP` or `SCTP`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub protocol: String,
    /// Why the port is not working, as a CamelCase reason (optionally
    /// prefixed with a domain, e.g. `example.com/PortUnavailable`); unset when
    /// it works.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub error: Option<String>,
}

/// The routes for one host (or for every host when `host` is empty).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(field = "ingressRuleValue", number = 2, message = "IngressRuleValue"))]
pub struct IngressRule {
    /// Host name the rule matches, a DNS name without port; a leading `*.`
    /// matches exactly one label. Empty matches every host.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub host: Option<String>,
    /// The HTTP routes of the host (Go's inlined `IngressRuleValue`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1, proto_in = "ingressRuleValue")]
    pub http: Option<HTTPIngressRuleValue>,
}

/// HTTP routes by path.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct HTTPIngressRuleValue {
    /// The paths and where their requests go. Go writes `null` for an unset
    /// list.
    #[serde(default)]
    // Required by the spec hook (`validateHTTPIngressRuleValue`).
    #[api(schema_required, list_type = "atomic")]
    #[api(proto = 1)]
    pub paths: Option<Vec<HTTPIngressPath>>,
}

/// One path of an HTTP rule and its backend.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct HTTPIngressPath {
    /// Path matched against the request's path, starting with `/`; empty
    /// matches all paths (for `ImplementationSpecific`).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub path: Option<String>,
    /// How the path matches: `Exact`, `Prefix` (by `/`-separated elements) or
    /// `ImplementationSpecific` (the controller decides).
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 3)]
    pub path_type: Option<String>,
    /// Where matching requests go.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    #[api(required)]
    pub backend: IngressBackend,
}

/// Where an ingress sends requests: a service port or another resource
/// (exactly one of the two).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct IngressBackend {
    /// A service port in the ingress's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub service: Option<IngressServiceBackend>,
    /// An object in the ingress's namespace, e.g. a storage bucket of the
    /// controller's own API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub resource: Option<TypedLocalObjectReference>,
}

/// A service and port requests go to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct IngressServiceBackend {
    /// Name of the service, in the ingress's namespace.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// The service port, by name or number.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub port: ServiceBackendPort,
}

/// A port of a service, by name or by number (exactly one). Replaced as a
/// whole by merges (Go's `structType=atomic`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct ServiceBackendPort {
    /// Name of the service port.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub name: Option<String>,
    /// Number of the service port.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub number: Option<i32>,
}

/// The `kubectl get ingresses` row (kube-apiserver's `printIngress`, wide as the
/// server prints it): class, up to three hosts, the load balancer's addresses
/// (each IP, else host name; sorted, deduplicated) and the ports served.
fn ingress_cells(ing: &Ingress) -> Vec<Value> {
    let class = ing.spec.ingress_class_name.as_deref().unwrap_or("<none>");
    let rules = ing.spec.rules.as_deref().unwrap_or_default();
    const MAX: usize = 3;
    let mut hosts: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if hosts.len() == MAX {
            more = true;
        }
        let host = rule.host.as_deref().unwrap_or_default();
        if !more && !host.is_empty() {
            hosts.push(host);
        }
    }
    let hosts = if hosts.is_empty() {
        "*".to_owned()
    } else if more {
        format!("{} + {} more...", hosts.join(","), rules.len() - MAX)
    } else {
        hosts.join(",")
    };
    let addresses: BTreeSet<&str> = ing
        .status
        .load_balancer
        .ingress
        .iter()
        .flatten()
        .filter_map(|lb| {
            let ip = lb.ip.as_deref().unwrap_or_default();
            let hostname = lb.hostname.as_deref().unwrap_or_default();
            [ip, hostname].into_iter().find(|a| !a.is_empty())
        })
        .collect();
    let ports = if ing.spec.tls.as_ref().is_some_and(|t| !t.is_empty()) {
        "80, 443"
    } else {
        "80"
    };
    vec![
        json!(class),
        json!(hosts),
        json!(addresses.into_iter().collect::<Vec<_>>().join(",")),
        json!(ports),
    ]
}

/// The annotation that named an ingress's class before `spec.ingressClassName`.
const INGRESS_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// The `Warning` header of an Ingress create: the class is named by the old
/// annotation and not by the field. Updates warn about nothing, as upstream.
fn ingress_warnings(ing: &Ingress, old: Option<&Ingress>) -> Vec<String> {
    let annotated = ing
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(INGRESS_CLASS_ANNOTATION));
    if old.is_none() && annotated && ing.spec.ingress_class_name.is_none() {
        vec![format!(
            "annotation {INGRESS_CLASS_ANNOTATION:?} is deprecated, please use 'spec.ingressClassName' instead"
        )]
    } else {
        Vec::new()
    }
}
