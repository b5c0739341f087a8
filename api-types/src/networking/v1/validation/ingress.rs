//! `ValidateIngressSpec` and `ValidateIngressCreate`.

use std::net::IpAddr;

use kapi_runtime::validation::{
    FieldErrorKind, FieldErrors, FieldPath, dns1035_label_errors, dns1123_subdomain_errors,
    port_name_errors, port_number_errors,
};

use super::super::ingress::Ingress;
use super::super::ingress::{HTTPIngressPath, IngressBackend, IngressSpec};
use crate::core::v1::reference::TypedLocalObjectReference;
use crate::validation::{Raw, dns1123_subdomain, path_segment_name};

/// The annotation that named an ingress's class before `ingressClassName`.
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";
/// The message of [`CLASS_ANNOTATION`]'s create-only rule.
const CLASS_MISMATCH: &str = "must match `ingressClassName` when both are specified";

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
        // Go prints the slice: a decoded `[]` is empty, not nil.
        let value = match spec.rules {
            Some(_) => "[]networking.IngressRule{}",
            None => "[]networking.IngressRule(nil)",
        };
        errs.invalid(
            path.clone(),
            Raw(value),
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
        (None, Some(resource)) => typed_local_ref(resource, &path.child("resource"), errs),
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

/// `validateIngressTypedLocalObjectReference`: a resource backend. Its kind
/// and name are required by the field rules of the reference; the ingress
/// says why (`kind is required`), as kube-apiserver 1.32 answers.
fn typed_local_ref(resource: &TypedLocalObjectReference, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(group) = resource.api_group.as_deref() {
        dns1123_subdomain(group, &path.child("apiGroup"), errs);
    }
    for (field, value) in [("kind", &resource.kind), ("name", &resource.name)] {
        let field_path = path.child(field);
        if value.is_empty() {
            let detail = format!("Required value: {field} is required");
            for e in errs.0.iter_mut().filter(|e| e.path == field_path) {
                if e.kind == FieldErrorKind::Required {
                    e.message.clone_from(&detail);
                }
            }
        } else {
            path_segment_name(value, &field_path, errs);
        }
    }
}

/// The `Ingress` hook (`ValidateIngressCreate`'s own rule): the class
/// annotation, when both are given, names the class `ingressClassName` does.
/// An update lifts it ([`validate_ingress_update`]).
pub(crate) fn validate_ingress(ingress: &Ingress, _path: &FieldPath, errs: &mut FieldErrors) {
    let annotation = ingress
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(CLASS_ANNOTATION));
    if let (Some(annotation), Some(class)) = (annotation, &ingress.spec.ingress_class_name)
        && annotation != class
    {
        // Upstream's path starts at `annotations`, not `metadata`.
        errs.invalid(
            FieldPath::new("annotations").child(CLASS_ANNOTATION),
            annotation.as_str(),
            CLASS_MISMATCH,
        );
    }
}

/// The `Ingress` update hook: `ValidateIngressUpdate` does not compare the
/// class annotation, so [`validate_ingress`]'s error is dropped.
pub(crate) fn validate_ingress_update(
    _new: &Ingress,
    _old: &Ingress,
    _path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let annotation_path = FieldPath::new("annotations").child(CLASS_ANNOTATION);
    errs.0
        .retain(|e| !(e.path == annotation_path && e.message.ends_with(CLASS_MISMATCH)));
}
