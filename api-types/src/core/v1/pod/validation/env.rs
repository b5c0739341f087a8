//! `ValidateEnv` and `ValidateEnvFrom`: variable names, exactly one source of a
//! `valueFrom`, downward API field paths, and key selectors.

use kapi_runtime::validation::{
    FieldErrors, FieldPath, config_key_errors, env_var_name_errors, qualified_name_errors,
};

use crate::core::v1::pod::container::Container;
use crate::core::v1::pod::env::{
    ConfigMapKeySelector, EnvVar, ObjectFieldSelector, ResourceFieldSelector, SecretKeySelector,
};
use crate::validation::{dns1123_subdomain, quantity_value};

/// Pod fields an environment variable can read without a subscript.
const ENV_FIELD_PATHS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// Pod fields the downward API converts at all (`ConvertDownwardAPIFieldLabel`).
const DOWNWARD_FIELD_LABELS: [&str; 14] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.serviceAccountName",
    "spec.schedulerName",
    "status.phase",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// The `EnvVar` hook: the name's syntax and the `valueFrom` sources.
pub(crate) fn validate_env_var(var: &EnvVar, path: &FieldPath, errs: &mut FieldErrors) {
    if !var.name.is_empty() {
        for detail in env_var_name_errors(&var.name) {
            errs.invalid(path.child("name"), var.name.as_str(), &detail);
        }
    }
    let Some(from) = &var.value_from else {
        return;
    };
    let from_path = path.child("valueFrom");
    let sources = [
        from.field_ref.is_some(),
        from.resource_field_ref.is_some(),
        from.config_map_key_ref.is_some(),
        from.secret_key_ref.is_some(),
    ]
    .into_iter()
    .filter(|set| *set)
    .count();
    if let Some(field_ref) = &from.field_ref {
        object_field_selector(
            field_ref,
            &ENV_FIELD_PATHS,
            &from_path.child("fieldRef"),
            errs,
        );
    }
    if let Some(resource_ref) = &from.resource_field_ref {
        resource_field_selector(
            resource_ref,
            false,
            &from_path.child("resourceFieldRef"),
            errs,
        );
    }
    if sources == 0 {
        errs.invalid(
            from_path,
            "",
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        );
    } else if var.value.as_deref().is_some_and(|v| !v.is_empty()) {
        errs.invalid(
            from_path,
            "",
            "may not be specified when `value` is not empty",
        );
    } else if sources > 1 {
        errs.invalid(
            from_path,
            "",
            "may not have more than one field specified at a time",
        );
    }
}

/// `pod.spec...fieldRef.fieldPath['key']` split into path and subscript.
fn split_subscript(field_path: &str) -> Option<(&str, &str)> {
    let inner = field_path.strip_suffix("']")?;
    let (path, key) = inner.split_once("['")?;
    (!path.is_empty()).then_some((path, key))
}

/// `validateObjectFieldSelector`: a field the downward API converts, and one of
/// `allowed` (the fields environment variables, or volume files, may read).
pub(super) fn object_field_selector(
    sel: &ObjectFieldSelector,
    allowed: &[&str],
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let version = sel.api_version.as_deref().unwrap_or_default();
    if version.is_empty() {
        errs.required(path.child("apiVersion"), "");
        return;
    }
    let field_path = sel.field_path.as_str();
    if field_path.is_empty() {
        errs.required(path.child("fieldPath"), "");
        return;
    }
    let conversion = if version != "v1" {
        Err(format!("unsupported pod version: {version}"))
    } else if let Some((base, _)) = split_subscript(field_path) {
        if matches!(base, "metadata.annotations" | "metadata.labels") {
            Ok(())
        } else {
            Err(format!(
                "field label does not support subscript: {field_path}"
            ))
        }
    } else if DOWNWARD_FIELD_LABELS.contains(&field_path) || field_path == "spec.host" {
        Ok(())
    } else {
        Err(format!("field label not supported: {field_path}"))
    };
    if let Err(e) = conversion {
        let detail = format!("error converting fieldPath: {e}");
        errs.invalid(path.child("fieldPath"), field_path, &detail);
        return;
    }
    let internal = if field_path == "spec.host" {
        "spec.nodeName"
    } else {
        field_path
    };
    match split_subscript(internal) {
        Some(("metadata.annotations", key)) => {
            for detail in qualified_name_errors(&key.to_lowercase()) {
                errs.invalid(path.clone(), key.to_lowercase().as_str(), &detail);
            }
        }
        Some((_, key)) => {
            for detail in qualified_name_errors(key) {
                errs.invalid(path.clone(), key, &detail);
            }
        }
        None if !allowed.contains(&internal) => {
            errs.not_supported_sorted(path.child("fieldPath"), internal, allowed)
        }
        None => {}
    }
}

/// Container resources an environment variable can read.
const ENV_RESOURCES: [&str; 6] = [
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

/// `validateContainerResourceFieldSelector` (environment variables, volume files): a
/// known resource (or huge pages), and a divisor the resource supports.
/// A volume file (`in_volume`) also names its container, and without one the
/// resource is not looked at.
pub(super) fn resource_field_selector(
    sel: &ResourceFieldSelector,
    in_volume: bool,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let resource = sel.resource.as_str();
    let container = sel.container_name.as_deref().unwrap_or_default();
    if in_volume && container.is_empty() {
        errs.required(path.child("containerName"), "");
    }
    let hugepages =
        resource.starts_with("requests.hugepages-") || resource.starts_with("limits.hugepages-");
    let named = !in_volume || !container.is_empty();
    if named && resource.is_empty() {
        errs.required(path.child("resource"), "");
    } else if named && !ENV_RESOURCES.contains(&resource) && !hugepages {
        errs.not_supported(path.child("resource"), resource, &ENV_RESOURCES);
    }
    let Some(divisor) = sel.divisor.as_ref().and_then(quantity_value) else {
        return;
    };
    if divisor == 0.0 {
        return;
    }
    let binary = (0..=6).map(|i| 1024f64.powi(i));
    let decimal = (0..=6).map(|i| 1000f64.powi(i));
    let bytes: Vec<f64> = binary.chain(decimal).collect();
    let (allowed, what): (Vec<f64>, &str) = match resource {
        "limits.cpu" | "requests.cpu" => (vec![0.001, 1.0], "cpu"),
        "limits.memory" | "requests.memory" => (bytes, "memory"),
        "limits.ephemeral-storage" | "requests.ephemeral-storage" => {
            (bytes, "local ephemeral storage")
        }
        _ if hugepages => (bytes, "hugepages"),
        _ => return,
    };
    if !allowed.contains(&divisor) {
        let detail = if what == "cpu" {
            "only divisor's values 1m and 1 are supported with the cpu resource".to_owned()
        } else {
            format!(
                "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei \
                 are supported with the {what} resource"
            )
        };
        errs.invalid(path.child("divisor"), resource, &detail);
    }
}

/// The key of a `configMapKeyRef` or `secretKeyRef`, and its object's name.
fn key_selector(name: Option<&str>, key: &str, path: &FieldPath, errs: &mut FieldErrors) {
    dns1123_subdomain(name.unwrap_or_default(), &path.child("name"), errs);
    if !key.is_empty() {
        for detail in config_key_errors(key) {
            errs.invalid(path.child("key"), key, &detail);
        }
    }
}

/// The `ConfigMapKeySelector` hook.
pub(crate) fn validate_config_map_key(
    sel: &ConfigMapKeySelector,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    key_selector(sel.name.as_deref(), &sel.key, path, errs);
}

/// The `SecretKeySelector` hook.
pub(crate) fn validate_secret_key(
    sel: &SecretKeySelector,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    key_selector(sel.name.as_deref(), &sel.key, path, errs);
}

/// `ValidateEnvFrom` over a container's `envFrom`: prefixes and exactly one
/// source each (the count errors point at the list, as upstream's do).
pub(crate) fn validate_env_from(container: &Container, path: &FieldPath, errs: &mut FieldErrors) {
    let list_path = path.child("envFrom");
    for (i, source) in container.env_from.iter().flatten().enumerate() {
        let item = list_path.index(i);
        if let Some(prefix) = source.prefix.as_deref().filter(|p| !p.is_empty()) {
            for detail in env_var_name_errors(prefix) {
                errs.invalid(item.child("prefix"), prefix, &detail);
            }
        }
        let mut sources = 0;
        if let Some(cm) = &source.config_map_ref {
            sources += 1;
            env_source_name(cm.name.as_deref(), &item.child("configMapRef"), errs);
        }
        if let Some(secret) = &source.secret_ref {
            sources += 1;
            env_source_name(secret.name.as_deref(), &item.child("secretRef"), errs);
        }
        match sources {
            0 => errs.invalid(
                list_path.clone(),
                "",
                "must specify one of: `configMapRef` or `secretRef`",
            ),
            1 => {}
            _ => errs.invalid(
                list_path.clone(),
                "",
                "may not have more than one field specified at a time",
            ),
        }
    }
}

/// The name of an `envFrom` source: required, a DNS subdomain.
fn env_source_name(name: Option<&str>, path: &FieldPath, errs: &mut FieldErrors) {
    match name.filter(|n| !n.is_empty()) {
        None => errs.required(path.child("name"), ""),
        Some(name) => dns1123_subdomain(name, &path.child("name"), errs),
    }
}
