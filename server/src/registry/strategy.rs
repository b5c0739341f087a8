//! The strategy steps shared by every kind: metadata rules on create and update
//! (uid, timestamps, generation, status vs spec), type checks, admission through
//! the kind's own decode/default/validate, and metadata validation.

use kapi_runtime::meta::{ObjectMeta, Time};
use kapi_runtime::validation::{FieldErrors, FieldPath, label_value_errors, qualified_name_errors};

use super::hooks::KindRest;
use super::{Endpoint, FieldValidation, Input, Object, Scope};
use crate::api_error::{ApiError, ApiResult};

/// Applies `fieldValidation` to the fields a body had that its kind does not
/// know: 400 under Strict, `Warning` headers under Warn, nothing under Ignore.
pub fn check_field_issues(
    input: &Input,
    validation: FieldValidation,
    warnings: &mut Vec<String>,
    strict: impl FnOnce(String) -> ApiError,
) -> ApiResult<()> {
    let (yaml, issues) = (&input.yaml_duplicates, &input.field_issues);
    if issues.is_empty() && yaml.is_empty() {
        return Ok(());
    }
    match validation {
        FieldValidation::Strict => {
            // Go's YAML decoder gathers its repeats in one error first.
            let mut all = Vec::with_capacity(issues.len() + 1);
            if !yaml.is_empty() {
                all.push(format!("yaml: unmarshal errors:\n  {}", yaml.join("\n  ")));
            }
            all.extend(issues.iter().cloned());
            Err(strict(format!("strict decoding error: {}", all.join(", "))))
        }
        FieldValidation::Warn => {
            warnings.extend(yaml.iter().chain(issues).cloned());
            Ok(())
        }
        FieldValidation::Ignore => Ok(()),
    }
}

/// The Strict refusal of a create or update body: the decoder's error.
pub fn body_refusal(scope: Scope<'_>) -> impl FnOnce(String) -> ApiError {
    let info = scope.served.info;
    move |error| {
        ApiError::bad_request(format!(
            "{} in version {:?} cannot be handled as a {}: {error}",
            info.kind, info.version, info.kind
        ))
    }
}

/// Checks and fills the namespace of a body against the path.
pub fn check_namespace(scope: Scope<'_>, meta: &mut ObjectMeta) -> ApiResult<()> {
    if !scope.info().namespaced {
        meta.namespace = None;
        return Ok(());
    }
    match (meta.namespace.as_deref(), scope.namespace) {
        (None | Some(""), Some(ns)) => meta.namespace = Some(ns.to_owned()),
        (Some(body), Some(path)) if body != path => {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        (_, None) => {
            return Err(ApiError::bad_request(
                "a namespaced object needs a namespace in the path",
            ));
        }
        _ => {}
    }
    Ok(())
}

/// PrepareForCreate: server-owned metadata, a fresh status for kinds whose status
/// is written through `/status`.
pub fn prepare_create(scope: Scope<'_>, object: &mut Object) {
    let meta = object.metadata_mut();
    meta.uid = Some(uuid::Uuid::new_v4().to_string());
    meta.creation_timestamp = Some(Time::now());
    meta.generation = scope.info().tracks_generation.then_some(1);
    meta.resource_version = None;
    meta.deletion_timestamp = None;
    meta.deletion_grace_period_seconds = None;
    meta.self_link = None;
    if scope.info().status_subresource {
        object.typed_mut().reset_status();
    }
    object.typed_mut().prepare_create();
}

/// PrepareForUpdate: keep what clients may not change, copy status or spec from
/// the old object depending on the endpoint, run the kind's hook for the
/// endpoint, then keep the server-owned metadata.
pub fn prepare_update(scope: Scope<'_>, old: &Object, new: &mut Object, endpoint: Endpoint) {
    if endpoint == Endpoint::Status {
        // Only status (and labels/annotations) change through /status.
        let mut merged = old.clone();
        merged.typed_mut().copy_status_from(new.typed());
        let mut meta = std::mem::take(new.metadata_mut());
        meta.finalizers = old.metadata().finalizers.clone();
        meta.owner_references = old.metadata().owner_references.clone();
        *merged.metadata_mut() = meta;
        *new = merged;
    } else if endpoint == Endpoint::Main && scope.info().status_subresource {
        new.typed_mut().copy_status_from(old.typed());
    }
    let hook = match endpoint {
        Endpoint::Main => None,
        Endpoint::Status => Some("status"),
        Endpoint::Part(subresource) => Some(subresource.name),
    };
    new.typed_mut().prepare_update(hook, old.typed());
    let old_meta = old.metadata();
    let meta = new.metadata_mut();
    meta.uid = old_meta.uid.clone();
    meta.creation_timestamp = old_meta.creation_timestamp;
    meta.deletion_timestamp = old_meta.deletion_timestamp;
    meta.deletion_grace_period_seconds = old_meta.deletion_grace_period_seconds;
    meta.namespace = old_meta.namespace.clone();
    meta.self_link = None;
    meta.generation = old_meta.generation;
}

/// Bumps `metadata.generation` when the desired state changed. Runs after
/// admission, so that fields the client left for defaulting do not count as
/// changes (Kubernetes compares decoded, defaulted objects, semantically).
pub fn bump_generation(scope: Scope<'_>, old: &Object, new: &mut Object) {
    let generation = match (scope.info().tracks_generation, old.metadata().generation) {
        (false, _) => None,
        (true, generation) => {
            let generation = generation.unwrap_or(1);
            let changed = !new.typed().spec_semantic_eq(old.typed());
            Some(if changed { generation + 1 } else { generation })
        }
    };
    new.metadata_mut().generation = generation;
}

/// Runs the kind's prepare hook, defaults and validation, plus metadata
/// validation, and on an update (`old` is the stored object, written through
/// the endpoint) the update checks of the endpoint.
pub fn admit(
    scope: Scope<'_>,
    rest: Option<&dyn KindRest>,
    object: &mut Object,
    old: Option<(&Object, Endpoint)>,
) -> ApiResult<()> {
    let mut errors = object.typed_mut().admit();
    validate_metadata(scope, object.metadata(), &mut errors);
    match old {
        None => {}
        Some((old, Endpoint::Part(subresource))) => {
            object
                .typed()
                .validate_subresource_update(subresource.name, old.typed(), &mut errors);
        }
        Some((old, _)) => object.typed().validate_update(old.typed(), &mut errors),
    }
    let stored = old.map(|(old, _)| old.typed());
    scope
        .served
        .ops
        .validate_served(object.typed(), stored, &mut errors);
    if let Some(rest) = rest {
        rest.validate(object, old.map(|(old, _)| old), &mut errors);
    }
    if !errors.is_empty() {
        let info = scope.info();
        return Err(ApiError::invalid(
            info.group,
            info.kind,
            object.metadata().name(),
            &errors,
        ));
    }
    Ok(())
}

/// ValidateObjectMeta: name, namespace, labels, annotations, finalizers.
pub fn validate_metadata(scope: Scope<'_>, meta: &ObjectMeta, errs: &mut FieldErrors) {
    let path = FieldPath::new("metadata");
    match meta.name.as_deref() {
        None | Some("") => errs.required(path.child("name"), "name or generateName is required"),
        Some(name) => {
            for detail in scope.info().name_format.errors(name) {
                errs.invalid(path.child("name"), name, &detail);
            }
        }
    }
    if scope.info().namespaced && meta.namespace().is_empty() {
        errs.required(path.child("namespace"), "");
    }
    for (key, value) in meta.labels.iter().flatten() {
        for detail in qualified_name_errors(key) {
            errs.invalid(path.child("labels"), key, &detail);
        }
        for detail in label_value_errors(value) {
            errs.invalid(path.child("labels"), value, &detail);
        }
    }
    let mut annotation_bytes = 0;
    for (key, value) in meta.annotations.iter().flatten() {
        annotation_bytes += key.len() + value.len();
        for detail in qualified_name_errors(&key.to_ascii_lowercase()) {
            errs.invalid(path.child("annotations"), key, &detail);
        }
    }
    if annotation_bytes > 256 * 1024 {
        errs.too_long(path.child("annotations"), 256 * 1024);
    }
    for (i, entry) in meta.managed_fields.iter().flatten().enumerate() {
        validate_managed_fields_entry(entry, path.child("managedFields").index(i), errs);
    }
    for (i, finalizer) in meta.finalizers().iter().enumerate() {
        for detail in qualified_name_errors(finalizer) {
            errs.invalid(path.child("finalizers").index(i), finalizer, &detail);
        }
    }
}

/// ValidateManagedFields: what a client may not write into an entry.
fn validate_managed_fields_entry(
    entry: &kapi_runtime::meta::ManagedFieldsEntry,
    path: FieldPath,
    errs: &mut FieldErrors,
) {
    let operation = entry.operation.as_deref().unwrap_or_default();
    if operation != "Apply" && operation != "Update" {
        errs.invalid(
            path.child("operation"),
            operation,
            "must be `Apply` or `Update`",
        );
    }
    let fields_type = entry.fields_type.as_deref().unwrap_or_default();
    if !fields_type.is_empty() && fields_type != "FieldsV1" {
        errs.invalid(path.child("fieldsType"), fields_type, "must be `FieldsV1`");
    }
    let manager = entry.manager.as_deref().unwrap_or_default();
    if manager.len() > 128 {
        errs.too_long(path.child("manager"), 128);
    }
    if entry.subresource.as_deref().unwrap_or_default().len() > 256 {
        errs.too_long(path.child("subresource"), 256);
    }
}

/// Gives an object a name from its `generateName` (five random characters, from
/// the alphabet Kubernetes uses, which avoids vowels and look-alikes).
pub fn generate_name(meta: &mut ObjectMeta) {
    if meta.name.as_deref().is_some_and(|n| !n.is_empty()) {
        return;
    }
    if let Some(prefix) = meta.generate_name.as_deref().filter(|p| !p.is_empty()) {
        let prefix: String = prefix.chars().take(253 - 5).collect();
        meta.name = Some(format!("{prefix}{}", crate::names::random_suffix()));
    }
}
