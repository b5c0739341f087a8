//! The strategy steps shared by every kind: metadata rules on create and update
//! (uid, timestamps, generation, status vs spec), type checks, admission through
//! the kind's own decode/default/validate, and metadata validation.

use kapi_runtime::meta::{ObjectMeta, Time};
use kapi_runtime::validation::{FieldErrors, FieldPath, label_value_errors, qualified_name_errors};
use serde_json::{Map, Value};

use super::{FieldValidation, Object, Scope};
use crate::api_error::{ApiError, ApiResult};

/// Checks `kind`/`apiVersion` of a body against the endpoint, filling them when
/// absent (Kubernetes decodes with the endpoint's kind as default).
pub fn check_type(scope: Scope<'_>, object: &mut Object) -> ApiResult<()> {
    let info = scope.info();
    let api_version = info.api_version();
    if object.api_version.is_empty() {
        object.api_version = api_version.clone();
    } else if object.api_version != api_version {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({}) does not match the expected API version ({api_version})",
            object.api_version
        )));
    }
    if object.kind.is_empty() {
        object.kind = info.kind.to_owned();
    } else if object.kind != info.kind {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({}) does not match the expected kind ({})",
            object.kind, info.kind
        )));
    }
    Ok(())
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
    let meta = &mut object.metadata;
    meta.uid = Some(uuid::Uuid::new_v4().to_string());
    meta.creation_timestamp = Some(Time::now());
    meta.generation = scope.info().tracks_generation.then_some(1);
    meta.resource_version = None;
    meta.deletion_timestamp = None;
    meta.deletion_grace_period_seconds = None;
    meta.self_link = None;
    if scope.info().status_subresource {
        object
            .body
            .insert("status".into(), Value::Object(Map::new()));
    }
}

/// PrepareForUpdate: keep what clients may not change, copy status or spec from
/// the old object depending on the endpoint, bump generation on spec changes.
pub fn prepare_update(scope: Scope<'_>, old: &Object, new: &mut Object, status_endpoint: bool) {
    let status_subresource = scope.info().status_subresource;
    if status_endpoint {
        // Only status (and labels/annotations) change through /status.
        let status = new.body.shift_remove("status");
        new.body = old.body.clone();
        match status {
            Some(status) => new.body.insert("status".into(), status),
            None => new.body.shift_remove("status"),
        };
        new.metadata.finalizers = old.metadata.finalizers.clone();
        new.metadata.owner_references = old.metadata.owner_references.clone();
    } else if status_subresource {
        match old.body.get("status") {
            Some(status) => new.body.insert("status".into(), status.clone()),
            None => new.body.shift_remove("status"),
        };
    }
    let meta = &mut new.metadata;
    meta.uid = old.metadata.uid.clone();
    meta.creation_timestamp = old.metadata.creation_timestamp;
    meta.deletion_timestamp = old.metadata.deletion_timestamp;
    meta.deletion_grace_period_seconds = old.metadata.deletion_grace_period_seconds;
    meta.namespace = old.metadata.namespace.clone();
    meta.self_link = None;
    meta.generation = old.metadata.generation;
}

/// Bumps `metadata.generation` when the desired state changed. Runs after
/// admission, so that fields the client left for defaulting do not count as
/// changes (Kubernetes compares decoded, defaulted objects).
pub fn bump_generation(scope: Scope<'_>, old: &Object, new: &mut Object) {
    let info = scope.info();
    new.metadata.generation = match (info.tracks_generation, old.metadata.generation) {
        (false, _) => None,
        (true, generation) => {
            let generation = generation.unwrap_or(1);
            let changed = spec_changed(old, new, info.status_subresource);
            Some(if changed { generation + 1 } else { generation })
        }
    };
}

/// Whether anything but metadata (and status, for kinds with a status
/// subresource) differs: that is what bumps `metadata.generation`.
fn spec_changed(old: &Object, new: &Object, skip_status: bool) -> bool {
    let counts = |key: &String| !(skip_status && key == "status");
    let fields = |o: &Object| o.body.keys().filter(|k| counts(k)).count();
    fields(old) != fields(new)
        || old
            .body
            .iter()
            .any(|(k, v)| counts(k) && new.body.get(k) != Some(v))
}

/// Runs the kind's decode, prepare hook, defaults and validation, plus metadata
/// validation; unknown fields follow `fieldValidation`.
pub fn admit(
    scope: Scope<'_>,
    object: Object,
    validation: FieldValidation,
    warnings: &mut Vec<String>,
) -> ApiResult<Object> {
    let info = scope.info();
    let input = object.typed_input().map_err(ApiError::bad_request)?;
    let admitted = scope.entry.ops.admit(input).map_err(|e| {
        ApiError::bad_request(format!(
            "{} in version {:?} cannot be handled as a {}: {e}",
            info.kind, info.version, info.kind
        ))
    })?;
    if !admitted.unknown_fields.is_empty() {
        match validation {
            FieldValidation::Strict => {
                let fields: Vec<String> = admitted
                    .unknown_fields
                    .iter()
                    .map(|f| format!("unknown field {f:?}"))
                    .collect();
                return Err(ApiError::bad_request(format!(
                    "strict decoding error: {}",
                    fields.join(", ")
                )));
            }
            FieldValidation::Warn => warnings.extend(
                admitted
                    .unknown_fields
                    .iter()
                    .map(|f| format!("unknown field {f:?}")),
            ),
            FieldValidation::Ignore => {}
        }
    }
    let mut errors = admitted.errors;
    let object = Object::from_typed_output(&object.kind, &object.api_version, admitted.object)
        .map_err(ApiError::internal)?;
    validate_metadata(scope, &object.metadata, &mut errors);
    if !errors.is_empty() {
        return Err(ApiError::invalid(
            info.group,
            info.kind,
            object.metadata.name(),
            &errors,
        ));
    }
    Ok(object)
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
    for (i, finalizer) in meta.finalizers().iter().enumerate() {
        for detail in qualified_name_errors(finalizer) {
            errs.invalid(path.child("finalizers").index(i), finalizer, &detail);
        }
    }
}

/// Gives an object a name from its `generateName` (five random characters, from
/// the alphabet Kubernetes uses, which avoids vowels and look-alikes).
pub fn generate_name(meta: &mut ObjectMeta) {
    if meta.name.as_deref().is_some_and(|n| !n.is_empty()) {
        return;
    }
    if let Some(prefix) = meta.generate_name.as_deref().filter(|p| !p.is_empty()) {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        let random = uuid::Uuid::new_v4();
        let suffix: String = random.as_bytes()[..5]
            .iter()
            .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
            .collect();
        let prefix: String = prefix.chars().take(253 - 5).collect();
        meta.name = Some(format!("{prefix}{suffix}"));
    }
}
