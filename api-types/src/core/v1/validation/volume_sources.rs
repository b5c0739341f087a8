//! The checks of the volume sources only persistent volumes have (their
//! secrets live in any namespace, so references name one), beyond the
//! structs' field rules.

use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1123_label_errors, dns1123_subdomain_errors, inclusive_range_error,
};

use crate::core::v1::persistent_volume::{PersistentVolume, PersistentVolumeSpec};
use crate::core::v1::pod::validation::{flex_options, initiator_format_error};
use crate::core::v1::secret_reference::SecretReference;

/// Checks the persistent-volume-only source `first` (its JSON name) of the
/// volume; `path` is the spec's.
pub(super) fn pv_source_checks(
    pv: &PersistentVolume,
    first: &str,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let spec: &PersistentVolumeSpec = &pv.spec;
    let text = |s: &Option<String>| s.clone().unwrap_or_default();
    match first {
        "iscsi" => iscsi(pv, &path.child("iscsi"), errs),
        "glusterfs" => {
            let Some(namespace) = spec
                .glusterfs
                .as_ref()
                .and_then(|g| g.endpoints_namespace.as_ref())
            else {
                return;
            };
            let ns_path = path.child("glusterfs").child("endpointsNamespace");
            if namespace.is_empty() {
                errs.invalid(
                    ns_path,
                    "",
                    "if the endpointnamespace is set, it must be a valid namespace name",
                );
            } else {
                label(namespace, &ns_path, errs);
            }
        }
        "cinder" => {
            if let Some(secret) = spec.cinder.as_ref().and_then(|c| c.secret_ref.as_ref()) {
                secret_names_given(secret, &path.child("cinder").child("secretRef"), errs);
            }
        }
        "flexVolume" => {
            if let Some(flex) = &spec.flex_volume {
                flex_options(flex.options.as_ref(), &path.child("flexVolume"), errs);
            }
        }
        "azureFile" => {
            let namespace = spec
                .azure_file
                .as_ref()
                .and_then(|a| a.secret_namespace.as_ref());
            if namespace.is_some_and(String::is_empty) {
                errs.required(path.child("azureFile").child("secretNamespace"), "");
            }
        }
        "scaleIO" => {
            let name = spec.scale_io.as_ref().and_then(|s| s.volume_name.clone());
            if name.unwrap_or_default().is_empty() {
                errs.required(path.child("scaleIO").child("volumeName"), "");
            }
        }
        "storageos" => {
            let Some(os) = &spec.storageos else { return };
            let os_path = path.child("storageos");
            let name = text(&os.volume_name);
            if name.is_empty() {
                errs.required(os_path.child("volumeName"), "");
            } else {
                label(&name, &os_path.child("volumeName"), errs);
            }
            let namespace = text(&os.volume_namespace);
            if !namespace.is_empty() {
                label(&namespace, &os_path.child("volumeNamespace"), errs);
            }
            if let Some(secret) = &os.secret_ref {
                let secret_path = os_path.child("secretRef");
                if text(&secret.name).is_empty() {
                    errs.required(secret_path.child("name"), "");
                }
                if text(&secret.namespace).is_empty() {
                    errs.required(secret_path.child("namespace"), "");
                }
            }
        }
        "csi" => {
            let Some(csi) = &spec.csi else { return };
            let csi_path = path.child("csi");
            let refs = [
                (
                    "controllerPublishSecretRef",
                    &csi.controller_publish_secret_ref,
                ),
                (
                    "controllerExpandSecretRef",
                    &csi.controller_expand_secret_ref,
                ),
                ("nodePublishSecretRef", &csi.node_publish_secret_ref),
                ("nodeExpandSecretRef", &csi.node_expand_secret_ref),
            ];
            for (field, secret) in refs {
                if let Some(secret) = secret {
                    secret_reference(secret, &csi_path.child(field), errs);
                }
            }
        }
        _ => {}
    }
}

/// `ValidateDNS1123Label` of a field.
fn label(value: &str, path: &FieldPath, errs: &mut FieldErrors) {
    for detail in dns1123_label_errors(value) {
        errs.invalid(path.clone(), value, &detail);
    }
}

/// A secret reference names its secret and the secret's namespace.
fn secret_names_given(secret: &SecretReference, path: &FieldPath, errs: &mut FieldErrors) {
    if secret.name.as_deref().unwrap_or_default().is_empty() {
        errs.required(path.child("name"), "");
    }
    if secret.namespace.as_deref().unwrap_or_default().is_empty() {
        errs.required(path.child("namespace"), "");
    }
}

/// `validatePVSecretReference`: a valid secret name and namespace.
fn secret_reference(secret: &SecretReference, path: &FieldPath, errs: &mut FieldErrors) {
    let name = secret.name.as_deref().unwrap_or_default();
    if name.is_empty() {
        errs.required(path.child("name"), "");
    } else {
        for detail in dns1123_subdomain_errors(name) {
            errs.invalid(path.child("name"), name, &detail);
        }
    }
    let namespace = secret.namespace.as_deref().unwrap_or_default();
    if namespace.is_empty() {
        errs.required(path.child("namespace"), "");
    } else {
        label(namespace, &path.child("namespace"), errs);
    }
}

/// `validateISCSIPersistentVolumeSource`: as a pod's iSCSI volume, with the
/// persistent volume's name in the length rule and shorter messages.
fn iscsi(pv: &PersistentVolume, path: &FieldPath, errs: &mut FieldErrors) {
    const FORMAT: &str = "must be valid format";
    let Some(iscsi) = &pv.spec.iscsi else { return };
    let name = pv.metadata.name.as_deref().unwrap_or_default();
    if iscsi.initiator_name.is_some() && name.len() + 1 + iscsi.target_portal.len() > 64 {
        errs.invalid(
            path.child("targetportal"),
            iscsi.target_portal.as_str(),
            "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if \
             iscsi.initiatorName is specified.",
        );
    }
    if !iscsi.iqn.is_empty() && initiator_format_error(&iscsi.iqn).is_some() {
        errs.invalid(path.child("iqn"), iscsi.iqn.as_str(), FORMAT);
    }
    if !(0..=255).contains(&iscsi.lun) {
        errs.invalid(path.child("lun"), iscsi.lun, &inclusive_range_error(0, 255));
    }
    let chap = iscsi.chap_auth_discovery.unwrap_or_default()
        || iscsi.chap_auth_session.unwrap_or_default();
    if chap && iscsi.secret_ref.is_none() {
        errs.required(path.child("secretRef"), "");
    }
    if let Some(secret) = &iscsi.secret_ref
        && secret.name.as_deref().unwrap_or_default().is_empty()
    {
        errs.required(path.child("secretRef").child("name"), "");
    }
    if let Some(initiator) = &iscsi.initiator_name
        && initiator_format_error(initiator).is_some()
    {
        errs.invalid(path.child("initiatorname"), initiator.as_str(), FORMAT);
    }
}
