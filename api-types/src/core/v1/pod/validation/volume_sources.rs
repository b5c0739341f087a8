//! `validateVolumeSource`: the checks of each volume source, run on the one
//! source a volume keeps (the others are reported as extra). Required string
//! fields whose path matches upstream's are the structs' `required` rules;
//! what upstream reports elsewhere (a GCE disk under `persistentDisk`) or
//! with a message is checked here.

use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1123_label_errors, dns1123_subdomain_errors,
};

use super::volume_drivers::{validate_fc, validate_flocker, validate_iscsi, validate_quobyte};
use super::volume_files::{
    file_mode, validate_downward_api, validate_ephemeral, validate_items, validate_projected,
};
use crate::core::v1::pod::volume::{HostPathVolumeSource, NFSVolumeSource, Volume};
use crate::core::v1::pod::volume_block::{AzureDiskVolumeSource, GCEPersistentDiskVolumeSource};
use crate::validation::quantity_value;

/// Upstream's message for a disk partition out of range (it allows 0).
const PARTITION: &str = "must be between 1 and 255, inclusive";

/// The host path types, as upstream lists them (sorted, the empty one first).
const HOST_PATH_TYPES: [&str; 8] = [
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
];

/// Checks the source `first` (its JSON name, from `volume_sources`) of the
/// volume at `path` (`spec.volumes[i]`).
pub(super) fn validate_volume_source(
    v: &Volume,
    first: &str,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let text = |s: &Option<String>| s.clone().unwrap_or_default();
    match first {
        "emptyDir" => {
            let limit = v.empty_dir.as_ref().and_then(|e| e.size_limit.as_ref());
            if limit.and_then(quantity_value).is_some_and(|q| q < 0.0) {
                errs.forbidden(
                    path.child("emptyDir").child("sizeLimit"),
                    "SizeLimit field must be a valid resource quantity",
                );
            }
        }
        "hostPath" => {
            if let Some(host) = &v.host_path {
                host_path_source(host, path, errs);
            }
        }
        "gitRepo" => {
            let dir = v.git_repo.as_ref().and_then(|g| g.directory.clone());
            local_descending(
                &dir.unwrap_or_default(),
                &path.child("gitRepo").child("directory"),
                errs,
            );
        }
        "gcePersistentDisk" => {
            if let Some(pd) = &v.gce_persistent_disk {
                gce_disk_source(pd, path, errs);
            }
        }
        "awsElasticBlockStore" => {
            let Some(ebs) = &v.aws_elastic_block_store else {
                return;
            };
            partition(ebs.partition, &path.child("awsElasticBlockStore"), errs);
        }
        "secret" => {
            let Some(secret) = &v.secret else { return };
            let secret_path = path.child("secret");
            if text(&secret.secret_name).is_empty() {
                errs.required(secret_path.child("secretName"), "");
            }
            file_mode(secret.default_mode, &secret_path.child("defaultMode"), errs);
            validate_items(secret.items.as_deref(), &secret_path, errs);
        }
        "configMap" => {
            let Some(cm) = &v.config_map else { return };
            let cm_path = path.child("configMap");
            if text(&cm.name).is_empty() {
                errs.required(cm_path.child("name"), "");
            }
            file_mode(cm.default_mode, &cm_path.child("defaultMode"), errs);
            validate_items(cm.items.as_deref(), &cm_path, errs);
        }
        "nfs" => {
            if let Some(nfs) = &v.nfs {
                nfs_source(nfs, path, errs);
            }
        }
        "iscsi" => {
            if let Some(iscsi) = &v.iscsi {
                validate_iscsi(iscsi, &v.name, path, errs);
            }
        }
        "flocker" => {
            if let Some(flocker) = &v.flocker {
                validate_flocker(flocker, &path.child("flocker"), errs);
            }
        }
        "cinder" => {
            let secret = v.cinder.as_ref().and_then(|c| c.secret_ref.as_ref());
            secret_ref_name(secret.map(|s| &s.name), &path.child("cinder"), errs);
        }
        "quobyte" => {
            if let Some(quobyte) = &v.quobyte {
                validate_quobyte(quobyte, &path.child("quobyte"), errs);
            }
        }
        "downwarAPI" => {
            if let Some(downward) = &v.downward_api {
                validate_downward_api(downward, &path.child("downwardAPI"), errs);
            }
        }
        "fc" => {
            if let Some(fc) = &v.fc {
                validate_fc(fc, &path.child("fc"), errs);
            }
        }
        "flexVolume" => {
            if let Some(flex) = &v.flex_volume {
                flex_options(flex.options.as_ref(), &path.child("flexVolume"), errs);
            }
        }
        "azureDisk" => {
            if let Some(disk) = &v.azure_disk {
                azure_disk_source(disk, path, errs);
            }
        }
        "storageos" => {
            let Some(os) = &v.storageos else { return };
            let os_path = path.child("storageos");
            let name = text(&os.volume_name);
            if name.is_empty() {
                errs.required(os_path.child("volumeName"), "");
            } else {
                dns_label(&name, &os_path.child("volumeName"), errs);
            }
            let namespace = text(&os.volume_namespace);
            if !namespace.is_empty() {
                dns_label(&namespace, &os_path.child("volumeNamespace"), errs);
            }
            secret_ref_name(os.secret_ref.as_ref().map(|s| &s.name), &os_path, errs);
        }
        "projected" => {
            if let Some(projected) = &v.projected {
                validate_projected(projected, &path.child("projected"), errs);
            }
        }
        "scaleIO" => {
            let name = v.scale_io.as_ref().and_then(|s| s.volume_name.clone());
            if name.unwrap_or_default().is_empty() {
                errs.required(path.child("scaleIO").child("volumeName"), "");
            }
        }
        "csi" => {
            let Some(csi) = &v.csi else { return };
            let csi_path = path.child("csi");
            csi_driver_name(&csi.driver, &csi_path.child("driver"), errs);
            if let Some(secret) = &csi.node_publish_secret_ref {
                let name = text(&secret.name);
                if name.is_empty() {
                    errs.required(csi_path.child("nodePublishSecretRef").child("name"), "");
                }
                // Upstream reports a bad secret name under `csi.name`.
                for detail in dns1123_subdomain_errors(&name)
                    .into_iter()
                    .filter(|_| !name.is_empty())
                {
                    errs.invalid(csi_path.child("name"), name.as_str(), &detail);
                }
            }
        }
        "ephemeral" => {
            if let Some(ephemeral) = &v.ephemeral {
                validate_ephemeral(ephemeral, &path.child("ephemeral"), errs);
            }
        }
        _ => {}
    }
}

/// `validateHostPathVolumeSource` (pods and persistent volumes); `parent`
/// is the path of the volume or of the persistent volume's spec.
/// A flex volume's options may not use the kubernetes.io and k8s.io
/// namespaces.
pub(crate) fn flex_options(
    options: Option<&std::collections::BTreeMap<String, String>>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    for key in options.into_iter().flatten().map(|(k, _)| k) {
        let domain = key.split_once('/').map_or(key.as_str(), |(d, _)| d);
        let normalized = format!(".{}", domain.to_lowercase());
        if normalized.ends_with(".kubernetes.io") || normalized.ends_with(".k8s.io") {
            errs.invalid(
                path.child("options").key(key),
                key.as_str(),
                "kubernetes.io and k8s.io namespaces are reserved",
            );
        }
    }
}

pub(crate) fn host_path_source(
    host: &HostPathVolumeSource,
    parent: &FieldPath,
    errs: &mut FieldErrors,
) {
    // An empty path is the field rule's `Required`, and the only error.
    if host.path.is_empty() {
        return;
    }
    let host_path = parent.child("hostPath");
    no_backsteps(&host.path, &host_path.child("path"), errs);
    if let Some(kind) = host.type_.as_deref()
        && !HOST_PATH_TYPES.contains(&kind)
    {
        errs.not_supported(host_path.child("type"), kind, &HOST_PATH_TYPES);
    }
}

/// `validateGCEPersistentDiskVolumeSource`, reported under `persistentDisk`
/// as upstream does.
pub(crate) fn gce_disk_source(
    pd: &GCEPersistentDiskVolumeSource,
    parent: &FieldPath,
    errs: &mut FieldErrors,
) {
    let pd_path = parent.child("persistentDisk");
    if pd.pd_name.is_empty() {
        errs.required(pd_path.child("pdName"), "");
    }
    partition(pd.partition, &pd_path, errs);
}

/// `validateNFSVolumeSource`: an absolute export path.
pub(crate) fn nfs_source(nfs: &NFSVolumeSource, parent: &FieldPath, errs: &mut FieldErrors) {
    if !nfs.path.starts_with('/') {
        errs.invalid(
            parent.child("nfs").child("path"),
            nfs.path.as_str(),
            "must be an absolute path",
        );
    }
}

/// `validateAzureDisk` beyond the field rules: a disk URI of the kind's form.
pub(crate) fn azure_disk_source(
    disk: &AzureDiskVolumeSource,
    parent: &FieldPath,
    errs: &mut FieldErrors,
) {
    let uri_path = parent.child("azureDisk").child("diskURI");
    let uri = disk.disk_uri.as_str();
    match disk.kind.as_deref() {
        Some("Managed") if !uri.starts_with("/subscriptions/") => errs.not_supported(
            uri_path,
            uri,
            &["/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"],
        ),
        Some(kind) if kind != "Managed" && !uri.starts_with("https://") => errs.not_supported(
            uri_path,
            uri,
            &["https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"],
        ),
        _ => {}
    }
}

/// `ValidateCSIDriverName`: at most 63 characters, a DNS subdomain once
/// lowercased. An empty name is the field rule's `Required` (and still gets
/// the subdomain error, as upstream's does).
pub(crate) fn csi_driver_name(driver: &str, path: &FieldPath, errs: &mut FieldErrors) {
    if driver.len() > 63 {
        errs.too_long(path.clone(), 63);
    }
    for detail in dns1123_subdomain_errors(&driver.to_lowercase()) {
        errs.invalid(path.clone(), driver, &detail);
    }
}

/// `ValidateDNS1123Label` of a field.
fn dns_label(value: &str, path: &FieldPath, errs: &mut FieldErrors) {
    for detail in dns1123_label_errors(value) {
        errs.invalid(path.clone(), value, &detail);
    }
}

/// A `secretRef` given must name its secret.
fn secret_ref_name(name: Option<&Option<String>>, path: &FieldPath, errs: &mut FieldErrors) {
    if name.is_some_and(|n| n.as_deref().unwrap_or_default().is_empty()) {
        errs.required(path.child("secretRef").child("name"), "");
    }
}

/// A disk partition, 0 (the whole disk) to 255.
pub(crate) fn partition(value: Option<i32>, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(n) = value
        && !(0..=255).contains(&n)
    {
        errs.invalid(path.child("partition"), n, PARTITION);
    }
}

/// `validatePathNoBacksteps`: no `..` element (one error however many).
pub(crate) fn no_backsteps(value: &str, path: &FieldPath, errs: &mut FieldErrors) {
    if value.split('/').any(|part| part == "..") {
        errs.invalid(path.clone(), value, "must not contain '..'");
    }
}

/// `validateLocalDescendingPath`: relative, without `..` elements.
pub(super) fn local_descending(value: &str, path: &FieldPath, errs: &mut FieldErrors) {
    if value.starts_with('/') {
        errs.invalid(path.clone(), value, "must be a relative path");
    }
    no_backsteps(value, path, errs);
}
