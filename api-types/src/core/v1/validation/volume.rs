//! `ValidatePersistentVolumeSpec` for PersistentVolume objects: access modes,
//! a storage capacity, reclaim policy, exactly one volume source.

use kapi_runtime::validation::{FieldErrors, FieldPath};

use crate::core::v1::persistent_volume::{PersistentVolume, PersistentVolumeSpec};
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
    let set = sources(spec);
    for extra in set.iter().skip(1) {
        errs.forbidden(
            spec_path.child(extra),
            "may not specify more than 1 volume type",
        );
    }
    if set.is_empty() {
        errs.required(spec_path, "must specify a volume type");
    }
}
