//! `ValidateIngressClass` and `ValidateIngressClassUpdate`.

use kapi_runtime::validation::{FieldErrors, FieldPath, dns1123_label_errors};

use super::super::ingressclass::{IngressClass, IngressClassParametersReference, IngressClassSpec};
use crate::validation::{dns1123_subdomain, domain_prefixed_path, path_segment_name};

/// The longest controller name (`maxLenIngressClassController`).
const MAX_CONTROLLER_LEN: usize = 250;

/// The `IngressClassSpec` hook (`validateIngressClassSpec`): a
/// domain-prefixed controller name and a well-formed parameters reference.
pub(crate) fn validate_ingress_class_spec(
    spec: &IngressClassSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let controller = spec.controller.as_deref().unwrap_or_default();
    let controller_path = path.child("controller");
    if controller.is_empty() {
        errs.required(controller_path, "");
    } else {
        if controller.len() > MAX_CONTROLLER_LEN {
            errs.too_long(controller_path.clone(), MAX_CONTROLLER_LEN);
        }
        domain_prefixed_path(controller, &controller_path, errs);
    }
    if let Some(params) = &spec.parameters {
        parameters(params, &path.child("parameters"), errs);
    }
}

/// `validateIngressClassParametersReference`.
fn parameters(params: &IngressClassParametersReference, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(group) = params.api_group.as_deref() {
        dns1123_subdomain(group, &path.child("apiGroup"), errs);
    }
    for (field, value) in [("kind", &params.kind), ("name", &params.name)] {
        if value.is_empty() {
            errs.required(path.child(field), &format!("{field} is required"));
        } else {
            path_segment_name(value, &path.child(field), errs);
        }
    }
    let Some(scope) = params.scope.as_deref() else {
        errs.required(path.child("scope"), "");
        return;
    };
    let namespace_path = path.child("namespace");
    match (scope, params.namespace.as_deref()) {
        ("Namespace", None) => {
            errs.required(namespace_path, "`parameters.scope` is set to 'Namespace'")
        }
        ("Namespace", Some(namespace)) => {
            for detail in dns1123_label_errors(namespace) {
                errs.invalid(namespace_path.clone(), namespace, &detail);
            }
        }
        ("Cluster", Some(_)) => {
            errs.forbidden(namespace_path, "`parameters.scope` is set to 'Cluster'")
        }
        ("Cluster", None) => {}
        (other, _) => errs.not_supported(path.child("scope"), other, &["Cluster", "Namespace"]),
    }
}

/// The `IngressClass` update hook (`validateIngressClassSpecUpdate`): the
/// controller is immutable.
pub(crate) fn validate_ingress_class_update(
    new: &IngressClass,
    old: &IngressClass,
    _path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if new.spec.controller != old.spec.controller {
        errs.invalid(
            FieldPath::new("spec").child("controller"),
            new.spec.controller.as_deref().unwrap_or_default(),
            "field is immutable",
        );
    }
}
