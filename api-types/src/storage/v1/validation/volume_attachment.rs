//! `ValidateVolumeAttachment`, `ValidateVolumeAttachmentV1` and
//! `ValidateVolumeAttachmentUpdate`.

use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::super::volume_attachment::{
    VolumeAttachment, VolumeAttachmentSpec, VolumeAttachmentStatus, VolumeError,
};
use crate::core::v1::persistent_volume::{PersistentVolume, PersistentVolumeSpec};
use crate::core::v1::pod::validation::csi_driver_name;
use crate::validation::{Raw, dns1123_subdomain};

/// Why a source is wrong: it names neither or both kinds of volume.
const ONE_SOURCE: &str = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";

/// The `VolumeAttachmentSpec` hook. An empty attacher is required twice
/// upstream (the field rule's `Required`, then `ValidateCSIDriverName` of
/// the v1 checks, with its subdomain error). The inline volume spec, the
/// only source given, is checked as a persistent volume's in the inline
/// context (`inline_volume_spec`).
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
        (None, Some(inline)) => {
            inline_volume_spec(inline, &source_path.child("inlineVolumeSpec"), errs)
        }
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

/// Why a field of an inline volume spec is refused.
const NOT_INLINE: &str = "may not be specified in the context of inline volumes";

/// `ValidatePersistentVolumeSpec` in the inline context: no claim, capacity,
/// node affinity or storage class; a CSI source; only `Retain` and
/// `Filesystem`. The checks a standalone volume shares come from the
/// persistent volume hook, run on a copy without the fields the inline
/// context judges otherwise, its paths moved under `path`.
fn inline_volume_spec(spec: &PersistentVolumeSpec, path: &FieldPath, errs: &mut FieldErrors) {
    if spec.claim_ref.is_some() {
        errs.forbidden(path.child("claimRef"), NOT_INLINE);
    }
    if spec.capacity.as_ref().is_some_and(|c| !c.is_empty()) {
        errs.forbidden(path.child("capacity"), NOT_INLINE);
    }
    if spec.csi.is_none() {
        errs.required(
            path.child("csi"),
            "has to be specified in the context of inline volumes",
        );
    }
    let policy = spec.persistent_volume_reclaim_policy.as_deref();
    if policy.is_some_and(|p| !p.is_empty() && p != "Retain") {
        errs.forbidden(
            path.child("persistentVolumeReclaimPolicy"),
            "may only be Retain in the context of inline volumes",
        );
    }
    if spec.node_affinity.is_some() {
        errs.forbidden(path.child("nodeAffinity"), NOT_INLINE);
    }
    if spec
        .storage_class_name
        .as_deref()
        .is_some_and(|c| !c.is_empty())
    {
        errs.forbidden(path.child("storageClassName"), NOT_INLINE);
    }
    if spec
        .volume_mode
        .as_deref()
        .is_some_and(|m| m != "Filesystem")
    {
        errs.forbidden(
            path.child("volumeMode"),
            "may not specify volumeMode other than Filesystem in the context of inline volumes",
        );
    }
    let mut shared = spec.clone();
    // A stand-in capacity: the standalone checks would require one.
    shared.capacity = Some(
        [("storage".to_owned(), kapi_runtime::Quantity("1".to_owned()))]
            .into_iter()
            .collect(),
    );
    // `Recycle` stays: the standalone checks take it, and judge a hostPath
    // of `/` with it as the inline context does.
    if policy != Some("Recycle") {
        shared.persistent_volume_reclaim_policy = None;
    }
    shared.node_affinity = None;
    shared.storage_class_name = None;
    shared.volume_mode = None;
    let volume = PersistentVolume {
        spec: shared,
        ..PersistentVolume::default()
    };
    let mut standalone = FieldErrors::default();
    crate::core::v1::validation::validate_pv(&volume, &FieldPath::root(), &mut standalone);
    let spec_prefix = "spec.";
    for mut e in standalone.0 {
        let at = e.path.as_str();
        if at == "spec" {
            e.path = path.clone();
        } else if let Some(rest) = at.strip_prefix(spec_prefix) {
            e.path = FieldPath::new(&format!("{path}.{rest}"));
        } else {
            continue;
        }
        errs.0.push(e);
    }
}

/// The most bytes of attachment metadata (keys and values together); also
/// the limit upstream names when an error message is too long.
const MAX_METADATA_BYTES: usize = 256 * 1024;
/// The longest error message an attacher may report.
const MAX_ERROR_MESSAGE_BYTES: usize = 1024;

/// The `VolumeAttachmentStatus` hook (`validateVolumeAttachmentStatus`).
/// A create starts from an empty status, so this bites on `/status`.
pub(crate) fn validate_volume_attachment_status(
    status: &VolumeAttachmentStatus,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let metadata = status.attachment_metadata.iter().flatten();
    let size: usize = metadata.map(|(k, v)| k.len() + v.len()).sum();
    if size > MAX_METADATA_BYTES {
        errs.too_long(path.child("attachmentMetadata"), MAX_METADATA_BYTES);
    }
    let volume_errors = [
        ("attachError", &status.attach_error),
        ("detachError", &status.detach_error),
    ];
    for (field, error) in volume_errors {
        if let Some(VolumeError {
            message: Some(message),
            ..
        }) = error
            && message.len() > MAX_ERROR_MESSAGE_BYTES
        {
            // Upstream names the metadata limit here, not the message one.
            errs.too_long(path.child(field).child("message"), MAX_METADATA_BYTES);
        }
    }
}

/// The `VolumeAttachment` update hook: the spec is read-only. Upstream
/// prints the spec with Go pointers; we leave the source out. kube-apiserver
/// 1.32 runs the object's checks twice on update, so the status checks
/// report again here (the spec's only matter when the spec changed, an
/// error we cannot match anyway).
pub(crate) fn validate_volume_attachment_update(
    new: &VolumeAttachment,
    old: &VolumeAttachment,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    validate_volume_attachment_status(&new.status, &path.child("status"), errs);
    if new.spec != old.spec {
        let value = format!(
            "storage.VolumeAttachmentSpec{{Attacher:{:?}, Source:storage.VolumeAttachmentSource{{...}}, NodeName:{:?}}}",
            new.spec.attacher, new.spec.node_name
        );
        errs.invalid(path.child("spec"), Raw(&value), "field is immutable");
    }
}
