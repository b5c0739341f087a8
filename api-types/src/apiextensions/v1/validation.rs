//! The checks apiextensions-apiserver's validation makes of a
//! CustomResourceDefinition that do not need its schemas: the name is
//! `<plural>.<group>`, and the names are DNS-1035 labels (the kinds in any
//! case), all required in the spec and checked only when set in the status
//! (which the server fills in).

use kapi_runtime::validation::{FieldErrors, FieldPath, dns1035_label_errors};

use super::customresourcedefinition::{CustomResourceDefinition, CustomResourceDefinitionNames};

/// The `CustomResourceDefinition` hook (part of upstream's
/// `ValidateCustomResourceDefinition`).
pub(crate) fn validate_crd(
    crd: &CustomResourceDefinition,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let spec = &crd.spec;
    let name = crd.metadata.name.as_deref().unwrap_or_default();
    if !name.is_empty() && name != format!("{}.{}", spec.names.plural, spec.group) {
        let detail = "must be spec.names.plural+\".\"+spec.group";
        errs.invalid(path.child("metadata").child("name"), name, detail);
    }
    let names = path.child("spec").child("names");
    for (field, value) in [
        ("plural", spec.names.plural.as_str()),
        (
            "singular",
            spec.names.singular.as_deref().unwrap_or_default(),
        ),
        ("kind", spec.names.kind.as_str()),
        (
            "listKind",
            spec.names.list_kind.as_deref().unwrap_or_default(),
        ),
    ] {
        if value.is_empty() {
            errs.required(names.child(field), "");
        }
    }
    validate_names(&spec.names, &names, errs);
    super::structural::validate_versions(spec, &path.child("spec"), errs);
    let accepted = path.child("status").child("acceptedNames");
    validate_names(&crd.status.accepted_names, &accepted, errs);
}

/// `ValidateCustomResourceDefinitionNames`: each name that is set.
fn validate_names(names: &CustomResourceDefinitionNames, path: &FieldPath, errs: &mut FieldErrors) {
    let label = |field: &str, value: &str, errs: &mut FieldErrors| {
        if let Some(detail) = dns1035_label_errors(value).first() {
            errs.invalid(path.child(field), value, detail);
        }
    };
    let kind_label = |field: &str, value: &str, errs: &mut FieldErrors| {
        if let Some(detail) = dns1035_label_errors(&value.to_lowercase()).first() {
            let detail = format!("may have mixed case, but should otherwise match: {detail}");
            errs.invalid(path.child(field), value, &detail);
        }
    };
    if !names.plural.is_empty() {
        label("plural", &names.plural, errs);
    }
    if let Some(singular) = names.singular.as_deref().filter(|s| !s.is_empty()) {
        label("singular", singular, errs);
    }
    if !names.kind.is_empty() {
        kind_label("kind", &names.kind, errs);
    }
    if let Some(list_kind) = names.list_kind.as_deref().filter(|s| !s.is_empty()) {
        kind_label("listKind", list_kind, errs);
    }
    for (field, list) in [
        ("shortNames", names.short_names.as_deref()),
        ("categories", names.categories.as_deref()),
    ] {
        for (i, value) in list.unwrap_or_default().iter().enumerate() {
            if let Some(detail) = dns1035_label_errors(value).first() {
                errs.invalid(path.child(field).index(i), value, detail);
            }
        }
    }
}
