//! The volume sources that write files (secret and ConfigMap items, downward
//! API files, projections) and ephemeral volumes' claim templates.

use std::collections::BTreeSet;

use kapi_runtime::meta::ObjectMeta;
use kapi_runtime::validation::{FieldErrors, FieldPath, qualified_name_errors};

use super::env::{object_field_selector, resource_field_selector};
use super::volume_sources::local_descending;
use crate::core::v1::pod::claim::EphemeralVolumeSource;
use crate::core::v1::pod::projected::{
    DownwardAPIVolumeFile, DownwardAPIVolumeSource, ProjectedVolumeSource,
};
use crate::core::v1::pod::volume::KeyToPath;
use crate::core::v1::validation::validate_pvc_spec;
use crate::validation::validate_labels;

/// Upstream's message for permission bits out of range.
const FILE_MODE: &str = "must be a number between 0 and 0777 (octal), both inclusive";

/// The pod fields a volume file may hold (`validVolumeDownwardAPIFieldPathExpressions`).
const VOLUME_FIELD_PATHS: [&str; 5] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
];

/// Permission bits are 0 to 0777.
pub(super) fn file_mode(mode: Option<i32>, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(mode) = mode
        && !(0..=0o777).contains(&mode)
    {
        errs.invalid(path.clone(), mode, FILE_MODE);
    }
}

/// `ValidateLocalNonReservedPath`: relative, no `..` element, and not
/// starting with `..` either.
fn local_non_reserved(value: &str, path: &FieldPath, errs: &mut FieldErrors) {
    local_descending(value, path, errs);
    if value.starts_with("..") && !value.starts_with("../") {
        errs.invalid(path.clone(), value, "must not start with '..'");
    }
}

/// `validateKeyToPath` of every item of a secret or ConfigMap source (an
/// empty key or path is the field rules' `Required`).
pub(super) fn validate_items(
    items: Option<&[KeyToPath]>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    for (i, item) in items.unwrap_or_default().iter().enumerate() {
        let item_path = path.child("items").index(i);
        local_non_reserved(&item.path, &item_path.child("path"), errs);
        file_mode(item.mode, &item_path.child("mode"), errs);
    }
}

/// `validateDownwardAPIVolumeSource`: the default mode, then each file
/// (reported under the source itself, without the item's index, as upstream
/// does).
pub(super) fn validate_downward_api(
    source: &DownwardAPIVolumeSource,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    file_mode(source.default_mode, &path.child("defaultMode"), errs);
    for file in source.items.iter().flatten() {
        downward_file(file, path, errs);
    }
}

/// `validateDownwardAPIVolumeFile`: a relative path, one of `fieldRef` (a
/// metadata field) and `resourceFieldRef`, the mode.
fn downward_file(file: &DownwardAPIVolumeFile, path: &FieldPath, errs: &mut FieldErrors) {
    if file.path.is_empty() {
        errs.required(path.child("path"), "");
    }
    local_non_reserved(&file.path, &path.child("path"), errs);
    match (&file.field_ref, &file.resource_field_ref) {
        (Some(field), resource) => {
            object_field_selector(field, &VOLUME_FIELD_PATHS, &path.child("fieldRef"), errs);
            if resource.is_some() {
                errs.invalid(
                    path.clone(),
                    "resource",
                    "fieldRef and resourceFieldRef can not be specified simultaneously",
                );
            }
        }
        (None, Some(resource)) => {
            resource_field_selector(resource, true, &path.child("resourceFieldRef"), errs);
        }
        (None, None) => errs.required(
            path.clone(),
            "one of fieldRef and resourceFieldRef is required",
        ),
    }
    file_mode(file.mode, &path.child("mode"), errs);
}

/// `validateProjectedVolumeSource`: the default mode, one source per entry,
/// and no path written twice (reported on the volume). A `clusterTrustBundle`
/// source is not looked at: kube-apiserver 1.32 drops it (its feature gate is
/// off by default).
pub(super) fn validate_projected(
    projected: &ProjectedVolumeSource,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    file_mode(projected.default_mode, &path.child("defaultMode"), errs);
    let mut paths = BTreeSet::new();
    for (i, source) in projected.sources.iter().enumerate() {
        let source_path = path.child("sources").index(i);
        let mut count = 0;
        let key_sources = [
            (
                "secret",
                source.secret.as_ref().map(|s| (&s.name, &s.items)),
            ),
            (
                "configMap",
                source.config_map.as_ref().map(|c| (&c.name, &c.items)),
            ),
        ];
        for (field, found) in key_sources {
            let Some((name, items)) = found else { continue };
            count += 1;
            let name = name.as_deref().unwrap_or_default();
            let own_path = source_path.child(field);
            if name.is_empty() {
                errs.required(own_path.child("name"), "");
            }
            validate_items(items.as_deref(), &own_path, errs);
            for item in items.iter().flatten().filter(|item| !item.path.is_empty()) {
                if !paths.insert(item.path.clone()) {
                    errs.invalid(path.clone(), name, "conflicting duplicate paths");
                }
            }
        }
        if let Some(downward) = &source.downward_api {
            count += 1;
            for file in downward.items.iter().flatten() {
                downward_file(file, &source_path.child("downwardAPI"), errs);
                if !file.path.is_empty() && !paths.insert(file.path.clone()) {
                    errs.invalid(
                        path.clone(),
                        file.path.as_str(),
                        "conflicting duplicate paths",
                    );
                }
            }
        }
        if let Some(token) = &source.service_account_token {
            count += 1;
            let seconds = token.expiration_seconds.unwrap_or_default();
            let seconds_path = source_path
                .child("serviceAccountToken")
                .child("expirationSeconds");
            if seconds < 600 {
                errs.invalid(
                    seconds_path.clone(),
                    seconds,
                    "may not specify a duration less than 10 minutes",
                );
            }
            if seconds > 1 << 32 {
                errs.invalid(
                    seconds_path,
                    seconds,
                    "may not specify a duration larger than 2^32 seconds",
                );
            }
            // Upstream reports the token's path on the volume, not the source.
            if token.path.is_empty() {
                errs.required(path.child("path"), "");
            } else {
                local_non_reserved(&token.path, &path.child("path"), errs);
            }
        }
        if count > 1 {
            errs.forbidden(
                source_path,
                "may not specify more than 1 volume type per source",
            );
        }
    }
}

/// `validateEphemeralVolumeSource`: a claim template, whose metadata carries
/// labels and annotations only, and a valid claim spec.
pub(super) fn validate_ephemeral(
    ephemeral: &EphemeralVolumeSource,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let template_path = path.child("volumeClaimTemplate");
    let Some(template) = &ephemeral.volume_claim_template else {
        errs.required(template_path, "");
        return;
    };
    template_meta(&template.metadata, &template_path.child("metadata"), errs);
    validate_pvc_spec(&template.spec, &template_path.child("spec"), errs);
}

/// `ValidateTemplateObjectMeta`: annotation keys and labels; any other field
/// set is forbidden.
fn template_meta(meta: &ObjectMeta, path: &FieldPath, errs: &mut FieldErrors) {
    for key in meta.annotations.iter().flatten().map(|(k, _)| k) {
        for detail in qualified_name_errors(&key.to_lowercase()) {
            errs.invalid(path.child("annotations"), key.as_str(), &detail);
        }
    }
    validate_labels(meta.labels.as_ref(), &path.child("labels"), errs);
    let text = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.is_empty());
    let set = [
        ("name", text(&meta.name)),
        ("generateName", text(&meta.generate_name)),
        ("namespace", text(&meta.namespace)),
        ("selfLink", text(&meta.self_link)),
        ("uid", text(&meta.uid)),
        ("resourceVersion", text(&meta.resource_version)),
        ("generation", meta.generation.is_some_and(|g| g != 0)),
        ("creationTimestamp", meta.creation_timestamp.is_some()),
        ("deletionTimestamp", meta.deletion_timestamp.is_some()),
        (
            "deletionGracePeriodSeconds",
            meta.deletion_grace_period_seconds.is_some(),
        ),
        (
            "ownerReferences",
            meta.owner_references
                .as_ref()
                .is_some_and(|o| !o.is_empty()),
        ),
        (
            "finalizers",
            meta.finalizers.as_ref().is_some_and(|f| !f.is_empty()),
        ),
        (
            "managedFields",
            meta.managed_fields.as_ref().is_some_and(|m| !m.is_empty()),
        ),
    ];
    for (field, _) in set.into_iter().filter(|(_, set)| *set) {
        errs.forbidden(path.child(field), "cannot be set");
    }
}
