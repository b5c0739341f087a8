//! `ValidatePersistentVolumeSpec` for PersistentVolume objects: access modes,
//! a storage capacity, reclaim policy, exactly one volume source.

use kapi_runtime::validation::{FieldErrors, FieldPath};

use crate::core::v1::persistent_volume::{PersistentVolume, PersistentVolumeSpec};
use crate::core::v1::pod::validation::{
    azure_disk_source, csi_driver_name, gce_disk_source, host_path_source, nfs_source,
    no_backsteps, partition, validate_fc, validate_flocker, validate_node_selector,
    validate_quobyte,
};
use crate::validation::{Raw, dns1123_subdomain, quantity_value};

/// The access modes a volume or claim may ask for, sorted.
pub(super) const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

/// Known access modes, `ReadWriteOncePod` alone (unknown modes are reported
/// and otherwise ignored).
pub(super) fn access_modes(modes: &[String], path: &FieldPath, errs: &mut FieldErrors) {
    for mode in modes {
        if !ACCESS_MODES.contains(&mode.as_str()) {
            errs.not_supported(path.clone(), mode, &ACCESS_MODES);
        }
    }
    let once_pod = modes.iter().any(|m| m == "ReadWriteOncePod");
    let others = modes
        .iter()
        .any(|m| m != "ReadWriteOncePod" && ACCESS_MODES.contains(&m.as_str()));
    if once_pod && others {
        errs.forbidden(
            path.clone(),
            "may not use ReadWriteOncePod with other access modes",
        );
    }
}

/// The sources set on a persistent volume, in the order upstream checks them.
fn sources(s: &PersistentVolumeSpec) -> Vec<&'static str> {
    let candidates = [
        ("hostPath", s.host_path.is_some()),
        ("gcePersistentDisk", s.gce_persistent_disk.is_some()),
        ("awsElasticBlockStore", s.aws_elastic_block_store.is_some()),
        ("glusterfs", s.glusterfs.is_some()),
        ("flocker", s.flocker.is_some()),
        ("nfs", s.nfs.is_some()),
        ("rbd", s.rbd.is_some()),
        ("quobyte", s.quobyte.is_some()),
        ("cinder", s.cinder.is_some()),
        ("cephfs", s.cephfs.is_some()),
        ("iscsi", s.iscsi.is_some()),
        ("fc", s.fc.is_some()),
        ("azureFile", s.azure_file.is_some()),
        ("flexVolume", s.flex_volume.is_some()),
        ("vsphereVolume", s.vsphere_volume.is_some()),
        ("photonPersistentDisk", s.photon_persistent_disk.is_some()),
        ("portworxVolume", s.portworx_volume.is_some()),
        ("azureDisk", s.azure_disk.is_some()),
        ("scaleIO", s.scale_io.is_some()),
        ("local", s.local.is_some()),
        ("storageos", s.storageos.is_some()),
        ("csi", s.csi.is_some()),
    ];
    candidates
        .into_iter()
        .filter(|(_, set)| *set)
        .map(|(name, _)| name)
        .collect()
}

/// The `PersistentVolume` hook.
pub(crate) fn validate_pv(pv: &PersistentVolume, path: &FieldPath, errs: &mut FieldErrors) {
    let spec = &pv.spec;
    let spec_path = path.child("spec");
    let modes = spec.access_modes.as_deref().unwrap_or_default();
    if modes.is_empty() {
        errs.required(spec_path.child("accessModes"), "");
    }
    let capacity_path = spec_path.child("capacity");
    let capacity = spec.capacity.as_ref().filter(|c| !c.is_empty());
    if capacity.is_none() {
        errs.required(capacity_path.clone(), "");
    }
    if let Some(class) = spec.storage_class_name.as_deref().filter(|c| !c.is_empty()) {
        dns1123_subdomain(class, &spec_path.child("storageClassName"), errs);
    }
    if let Some(mode) = spec.volume_mode.as_deref()
        && !matches!(mode, "Block" | "Filesystem")
    {
        errs.not_supported(
            spec_path.child("volumeMode"),
            mode,
            &["Block", "Filesystem"],
        );
    }
    access_modes(modes, &spec_path.child("accessModes"), errs);
    match capacity {
        None => errs.not_supported_value(
            capacity_path.clone(),
            Raw("core.ResourceList(nil)"),
            &["storage"],
        ),
        Some(c) if !c.contains_key("storage") || c.len() > 1 => {
            // Upstream prints Go's resource.Quantity internals here.
            let keys: Vec<String> = c.keys().map(|k| format!("{k:?}")).collect();
            let value = format!("core.ResourceList{{{}}}", keys.join(", "));
            errs.not_supported_value(capacity_path.clone(), Raw(&value), &["storage"]);
        }
        Some(_) => {}
    }
    for (name, quantity) in capacity.into_iter().flatten() {
        if quantity_value(quantity).is_some_and(|v| v <= 0.0) {
            errs.invalid(
                capacity_path.key(name),
                quantity.0.as_str(),
                "must be greater than zero",
            );
        }
    }
    if let Some(policy) = spec.persistent_volume_reclaim_policy.as_deref()
        && !policy.is_empty()
        && !matches!(policy, "Delete" | "Recycle" | "Retain")
    {
        errs.not_supported(
            spec_path.child("persistentVolumeReclaimPolicy"),
            policy,
            &["Delete", "Recycle", "Retain"],
        );
    }
    let affinity_path = spec_path.child("nodeAffinity");
    if let Some(affinity) = &spec.node_affinity {
        match &affinity.required {
            Some(required) => {
                validate_node_selector(required, &affinity_path.child("required"), errs)
            }
            None => errs.required(
                affinity_path.child("required"),
                "must specify required node constraints",
            ),
        }
    }
    let set = sources(spec);
    for extra in set.iter().skip(1) {
        errs.forbidden(
            spec_path.child(extra),
            "may not specify more than 1 volume type",
        );
    }
    match set.first() {
        Some(first) => {
            source_checks(spec, first, &spec_path, errs);
            super::volume_sources::pv_source_checks(pv, first, &spec_path, errs);
        }
        None => errs.required(spec_path, "must specify a volume type"),
    }
}

/// The checks of the one source a persistent volume keeps that the field
/// rules do not make, for the sources it shares with pod volumes and for
/// local volumes (which need node affinity).
fn source_checks(
    spec: &PersistentVolumeSpec,
    first: &str,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    match first {
        "hostPath" => {
            if let Some(host) = &spec.host_path {
                host_path_source(host, path, errs);
            }
        }
        "gcePersistentDisk" => {
            if let Some(pd) = &spec.gce_persistent_disk {
                gce_disk_source(pd, path, errs);
            }
        }
        "awsElasticBlockStore" => {
            if let Some(ebs) = &spec.aws_elastic_block_store {
                partition(ebs.partition, &path.child("awsElasticBlockStore"), errs);
            }
        }
        "nfs" => {
            if let Some(nfs) = &spec.nfs {
                nfs_source(nfs, path, errs);
            }
        }
        "flocker" => {
            if let Some(flocker) = &spec.flocker {
                validate_flocker(flocker, &path.child("flocker"), errs);
            }
        }
        "quobyte" => {
            if let Some(quobyte) = &spec.quobyte {
                validate_quobyte(quobyte, &path.child("quobyte"), errs);
            }
        }
        "fc" => {
            if let Some(fc) = &spec.fc {
                validate_fc(fc, &path.child("fc"), errs);
            }
        }
        "azureDisk" => {
            if let Some(disk) = &spec.azure_disk {
                azure_disk_source(disk, path, errs);
            }
        }
        "csi" => {
            if let Some(csi) = &spec.csi {
                csi_driver_name(&csi.driver, &path.child("csi").child("driver"), errs);
            }
        }
        "local" => {
            if let Some(local) = spec.local.as_ref().filter(|l| !l.path.is_empty()) {
                no_backsteps(&local.path, &path.child("local").child("path"), errs);
            }
            if spec.node_affinity.is_none() {
                errs.required(
                    path.child("nodeAffinity"),
                    "Local volume requires node affinity",
                );
            }
        }
        _ => {}
    }
}
