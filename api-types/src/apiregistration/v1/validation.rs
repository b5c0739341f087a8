//! The checks kube-aggregator's apiregistration validation makes of an
//! APIService: the name is `<version>.<group>`, the group version and
//! priorities are in range, and a remote service is fully named and trusted
//! either through a CA bundle or explicitly without one.

use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1035_label_errors, dns1123_subdomain_errors, path_segment_errors,
    port_number_errors,
};

use super::apiservice::{APIService, APIServiceStatus};

/// The `APIService` hook (`ValidateAPIService`; the server checks the name
/// as a path segment, this hook that it names the group version).
pub(crate) fn validate_api_service(service: &APIService, path: &FieldPath, errs: &mut FieldErrors) {
    let spec = &service.spec;
    let group = spec.group.as_deref().unwrap_or_default();
    let version = spec.version.as_deref().unwrap_or_default();
    let spec_path = path.child("spec");

    let name = service.metadata.name.as_deref().unwrap_or_default();
    let wanted = format!("{version}.{group}");
    if !name.is_empty() && path_segment_errors(name).is_empty() && name != wanted {
        let detail = format!("must be `spec.version+\".\"+spec.group`: {wanted:?}");
        errs.invalid(path.child("metadata").child("name"), name, &detail);
    }

    if group.is_empty() && version != "v1" {
        let detail = "only v1 may have an empty group and it better be legacy kube";
        errs.required(spec_path.child("group"), detail);
    }
    if !group.is_empty() {
        for detail in dns1123_subdomain_errors(group) {
            errs.invalid(spec_path.child("group"), group, &detail);
        }
    }
    for detail in dns1035_label_errors(version) {
        errs.invalid(spec_path.child("version"), version, &detail);
    }
    let minimum = spec.group_priority_minimum;
    if !(1..=20_000).contains(&minimum) {
        let detail = "must be positive and less than 20000";
        errs.invalid(spec_path.child("groupPriorityMinimum"), minimum, detail);
    }
    let priority = spec.version_priority;
    if !(1..=1000).contains(&priority) {
        let detail = "must be positive and less than 1000";
        errs.invalid(spec_path.child("versionPriority"), priority, detail);
    }
    validate_backend(service, &spec_path, errs);
    validate_status(&service.status, &path.child("status"), errs);
}

/// Who serves the API: a local one has no CA bundle and does not skip TLS
/// checks; a remote one names its Service and port, and skips TLS checks only
/// without a CA bundle.
fn validate_backend(service: &APIService, path: &FieldPath, errs: &mut FieldErrors) {
    let spec = &service.spec;
    let ca_bytes = spec.ca_bundle.as_ref().map_or(0, |b| b.0.len());
    let insecure = spec.insecure_skip_tls_verify.unwrap_or_default();
    let Some(backend) = &spec.service else {
        if ca_bytes != 0 {
            let value = format!("{ca_bytes} bytes");
            let detail = "local APIServices may not have a caBundle";
            errs.invalid(path.child("caBundle"), value, detail);
        }
        if insecure {
            let detail = "local APIServices may not have insecureSkipTLSVerify";
            errs.invalid(path.child("insecureSkipTLSVerify"), insecure, detail);
        }
        return;
    };
    let service_path = path.child("service");
    if backend.namespace.as_deref().unwrap_or_default().is_empty() {
        errs.required(service_path.child("namespace"), "");
    }
    if backend.name.as_deref().unwrap_or_default().is_empty() {
        errs.required(service_path.child("name"), "");
    }
    let port = backend.port.unwrap_or_default();
    let port_errors = port_number_errors(port.into());
    if !port_errors.is_empty() {
        let detail = format!("port is not valid: {}", port_errors.join(", "));
        errs.invalid(service_path.child("port"), port, &detail);
    }
    if insecure && ca_bytes > 0 {
        let detail = "may not be true if caBundle is present";
        errs.invalid(path.child("insecureSkipTLSVerify"), insecure, detail);
    }
}

/// `ValidateAPIServiceStatus`: condition statuses are `True`, `False` or
/// `Unknown`. (Status is reset on create, so this bites on `/status` writes.)
fn validate_status(status: &APIServiceStatus, path: &FieldPath, errs: &mut FieldErrors) {
    for (i, condition) in status.conditions.iter().flatten().enumerate() {
        if !matches!(condition.status.as_str(), "True" | "False" | "Unknown") {
            let status_path = path.child("conditions").index(i).child("status");
            errs.not_supported(
                status_path,
                &condition.status,
                &["True", "False", "Unknown"],
            );
        }
    }
}
