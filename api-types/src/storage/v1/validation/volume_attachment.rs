//! `ValidateVolumeAttachment`, `ValidateVolumeAttachmentV1` and
//! `ValidateVolumeAttachmentUpdate`.

use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::super::volume_attachment::{VolumeAttachment, VolumeAttachmentSpec};
use crate::core::v1::pod::validation::csi_driver_name;
use crate::validation::{Raw, dns1123_subdomain};

/// Why a source is wrong: it names neither or both kinds of volume.
const ONE_SOURCE: &str = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";

/// The `VolumeAttachmentSpec` hook. An empty attacher is required twice
/// upstream (the field rule's `Required`, then `ValidateCSIDriverName` of
/// the v1 checks, with its subdomain error). The inline volume spec is not
/// checked here.
pub(crate) fn validate_volume_attachment_spec(
    spec: &VolumeAttachmentSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let source_path = path.child("source");
    let source = &spec.source;
    match (&source.persistent_volume_name, &source.inline_volume_spec) {
        (None, None) => errs.required(source_path, ONE_SOURCE),
        (Some(_), Some(_)) => errs.forbidden(source_path, ONE_SOURCE),
        (Some(name), None) if name.is_empty() => errs.required(
            source_path.child("persistentVolumeName"),
            "must specify non empty persistentVolumeName",
        ),
        _ => {}
    }
    // `ValidateVolumeAttachmentV1`: a persistent volume's name.
    if let Some(name) = &source.persistent_volume_name {
        dns1123_subdomain(
            name,
            &path.child("source").child("persistentVolumeName"),
            errs,
        );
    }
    dns1123_subdomain(&spec.node_name, &path.child("nodeName"), errs);
    let attacher_path = path.child("attacher");
    if spec.attacher.is_empty() {
        errs.required(attacher_path.clone(), "");
    }
    csi_driver_name(&spec.attacher, &attacher_path, errs);
}

/// The `VolumeAttachment` update hook: the spec is read-only. Upstream
/// prints the spec with Go pointers; we leave the source out.
pub(crate) fn validate_volume_attachment_update(
    new: &VolumeAttachment,
    old: &VolumeAttachment,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if new.spec != old.spec {
        let value = format!(
            "storage.VolumeAttachmentSpec{{Attacher:{:?}, Source:storage.VolumeAttachmentSource{{...}}, NodeName:{:?}}}",
            new.spec.attacher, new.spec.node_name
        );
        errs.invalid(path.child("spec"), Raw(&value), "field is immutable");
    }
}
