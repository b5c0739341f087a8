//! The checks of pkg/apis/authorization/validation for the access reviews:
//! exactly one kind of attributes, a subject to ask about, well-formed
//! selectors, a local review kept to its own namespace, and no metadata.

use kapi_runtime::meta::{LabelSelectorRequirement, ObjectMeta};
use kapi_runtime::validation::{FieldErrors, FieldPath, label_value_errors};
use serde_json::Value;

use super::field_selector_requirement::FieldSelectorRequirement;
use super::localsubjectaccessreview::LocalSubjectAccessReview;
use super::selfsubjectaccessreview::SelfSubjectAccessReview;
use super::subjectaccessreview::{
    FieldSelectorAttributes, LabelSelectorAttributes, NonResourceAttributes, ResourceAttributes,
    SubjectAccessReview, SubjectAccessReviewSpec,
};
use crate::validation::{Raw, label_name};

/// The `SubjectAccessReview` hook (`ValidateSubjectAccessReview`).
pub(crate) fn validate_subject_access_review(
    review: &SubjectAccessReview,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    review_spec(&review.spec, &path.child("spec"), errs);
    empty_metadata(&review.metadata, false, path, errs);
}

/// The `SelfSubjectAccessReview` hook: the attributes only, the subject
/// being the caller.
pub(crate) fn validate_self_subject_access_review(
    review: &SelfSubjectAccessReview,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let spec = &review.spec;
    attributes(
        spec.resource_attributes.as_ref(),
        spec.non_resource_attributes.as_ref(),
        &path.child("spec"),
        errs,
    );
    empty_metadata(&review.metadata, false, path, errs);
}

/// The `LocalSubjectAccessReview` hook: a subject access review whose
/// resource attributes name the review's namespace, and no non-resource
/// attributes.
pub(crate) fn validate_local_subject_access_review(
    review: &LocalSubjectAccessReview,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let spec_path = path.child("spec");
    review_spec(&review.spec, &spec_path, errs);
    let namespace = review.metadata.namespace.as_deref().unwrap_or_default();
    if let Some(resource) = &review.spec.resource_attributes {
        let theirs = resource.namespace.as_deref().unwrap_or_default();
        if theirs != namespace {
            errs.invalid(
                spec_path.child("resourceAttributes").child("namespace"),
                theirs,
                "must match metadata.namespace",
            );
        }
    }
    if let Some(non_resource) = &review.spec.non_resource_attributes {
        errs.invalid(
            spec_path.child("nonResourceAttributes"),
            Raw(&go_non_resource(non_resource)),
            "disallowed on this kind of request",
        );
    }
    empty_metadata(&review.metadata, true, path, errs);
}

/// A review carries no metadata but managed fields (and, for a local one,
/// its namespace): every other field is its zero value, an empty list or
/// map counting as absent. Upstream prints the metadata as Go does, with
/// pointers and times; we print it as JSON.
fn empty_metadata(meta: &ObjectMeta, local: bool, path: &FieldPath, errs: &mut FieldErrors) {
    let Ok(Value::Object(mut fields)) = serde_json::to_value(meta) else {
        return;
    };
    fields.remove("managedFields");
    if local {
        fields.remove("namespace");
    }
    let zero = |v: &Value| match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
    };
    if fields.values().all(zero) {
        return;
    }
    let message = if local {
        "must be empty except for namespace"
    } else {
        "must be empty"
    };
    let shown = serde_json::to_string(meta).unwrap_or_default();
    errs.invalid(path.child("metadata"), Raw(&shown), message);
}

/// `ValidateSubjectAccessReviewSpec`: the attributes, and a user or groups.
fn review_spec(spec: &SubjectAccessReviewSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let resource = spec.resource_attributes.as_ref();
    let non_resource = spec.non_resource_attributes.as_ref();
    exactly_one(resource, non_resource, path, errs);
    let user = spec.user.as_deref().unwrap_or_default();
    if user.is_empty() && spec.groups.as_ref().is_none_or(Vec::is_empty) {
        errs.invalid(
            path.child("user"),
            user,
            "at least one of user or group must be specified",
        );
    }
    if let Some(resource) = resource {
        resource_attributes(resource, &path.child("resourceAttributes"), errs);
    }
}

/// Exactly one of the two kinds of attributes, then the resource ones.
fn attributes(
    resource: Option<&ResourceAttributes>,
    non_resource: Option<&NonResourceAttributes>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    exactly_one(resource, non_resource, path, errs);
    if let Some(resource) = resource {
        resource_attributes(resource, &path.child("resourceAttributes"), errs);
    }
}

/// Both kinds of attributes, or neither. Upstream shows the non-resource
/// attributes in both messages (`null` when absent).
fn exactly_one(
    resource: Option<&ResourceAttributes>,
    non_resource: Option<&NonResourceAttributes>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    match (resource, non_resource) {
        (Some(_), Some(non_resource)) => errs.invalid(
            path.child("nonResourceAttributes"),
            Raw(&go_non_resource(non_resource)),
            "cannot be specified in combination with resourceAttributes",
        ),
        (None, None) => errs.invalid(
            path.child("resourceAttributes"),
            "null",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ),
        _ => {}
    }
}

/// Non-resource attributes as Go's `%#v` prints them.
fn go_non_resource(attributes: &NonResourceAttributes) -> String {
    format!(
        "authorization.NonResourceAttributes{{Path:{:?}, Verb:{:?}}}",
        attributes.path.as_deref().unwrap_or_default(),
        attributes.verb.as_deref().unwrap_or_default()
    )
}

/// `validateResourceAttributes`: the field and label selectors.
fn resource_attributes(resource: &ResourceAttributes, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(selector) = &resource.field_selector {
        field_selector(selector, &path.child("fieldSelector"), errs);
    }
    if let Some(selector) = &resource.label_selector {
        label_selector(selector, &path.child("labelSelector"), errs);
    }
}

/// A selector is given as text or as requirements, never both nor neither.
fn raw_or_requirements(raw: &str, requirements: usize, path: &FieldPath, errs: &mut FieldErrors) {
    if !raw.is_empty() && requirements > 0 {
        errs.invalid(
            path.child("rawSelector"),
            raw,
            "may not specified at the same time as requirements",
        );
    }
    if raw.is_empty() && requirements == 0 {
        errs.required(
            path.child("requirements"),
            &format!("when {path} is specified, requirements or rawSelector is required"),
        );
    }
}

/// Values must match the operator; an operator the server does not know is
/// let through (a newer client may know it).
fn operator_values(operator: &str, values: usize, path: &FieldPath, errs: &mut FieldErrors) {
    match operator {
        "In" | "NotIn" if values == 0 => errs.required(
            path.child("values"),
            "must be specified when `operator` is 'In' or 'NotIn'",
        ),
        "Exists" | "DoesNotExist" if values > 0 => errs.forbidden(
            path.child("values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        _ => {}
    }
}

fn field_selector(selector: &FieldSelectorAttributes, path: &FieldPath, errs: &mut FieldErrors) {
    let requirements: &[FieldSelectorRequirement] =
        selector.requirements.as_deref().unwrap_or_default();
    let raw = selector.raw_selector.as_deref().unwrap_or_default();
    raw_or_requirements(raw, requirements.len(), path, errs);
    for (i, requirement) in requirements.iter().enumerate() {
        let item = path.child("requirements").index(i);
        if requirement.key.is_empty() {
            errs.required(item.child("key"), "must be specified");
        }
        let values = requirement.values.as_ref().map_or(0, Vec::len);
        operator_values(&requirement.operator, values, &item, errs);
    }
}

fn label_selector(selector: &LabelSelectorAttributes, path: &FieldPath, errs: &mut FieldErrors) {
    let requirements: &[LabelSelectorRequirement] =
        selector.requirements.as_deref().unwrap_or_default();
    let raw = selector.raw_selector.as_deref().unwrap_or_default();
    raw_or_requirements(raw, requirements.len(), path, errs);
    // The requirement type's own rules (those of a workload's selector:
    // known operators only, a non-empty key) do not hold here.
    let own = format!("{}[", path.child("requirements"));
    errs.0.retain(|e| !e.path.as_str().starts_with(&own));
    for (i, requirement) in requirements.iter().enumerate() {
        let item = path.child("requirements").index(i);
        let values = requirement.values.as_deref().unwrap_or_default();
        operator_values(&requirement.operator, values.len(), &item, errs);
        label_name(&requirement.key, &item.child("key"), errs);
        for (j, value) in values.iter().enumerate() {
            for detail in label_value_errors(value) {
                errs.invalid(item.child("values").index(j), value.as_str(), &detail);
            }
        }
    }
}
