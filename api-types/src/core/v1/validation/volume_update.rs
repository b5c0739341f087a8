//! `ValidatePersistentVolumeUpdate`: what an update of a persistent volume
//! may not change (its source, its volume mode, its node affinity).

use kapi_runtime::ApiType;
use kapi_runtime::validation::{FieldErrors, FieldPath};

use crate::core::v1::persistent_volume::{
    PersistentVolume, PersistentVolumeSpec, VolumeNodeAffinity,
};
use crate::validation::Raw;

/// Node labels whose beta key a volume's node affinity may trade for the GA
/// one.
const BETA_TO_GA: [(&str, &str); 5] = [
    (
        "failure-domain.beta.kubernetes.io/zone",
        "topology.kubernetes.io/zone",
    ),
    (
        "failure-domain.beta.kubernetes.io/region",
        "topology.kubernetes.io/region",
    ),
    (
        "beta.kubernetes.io/instance-type",
        "node.kubernetes.io/instance-type",
    ),
    ("beta.kubernetes.io/os", "kubernetes.io/os"),
    ("beta.kubernetes.io/arch", "kubernetes.io/arch"),
];

/// The `PersistentVolume` update hook. The paths of the volume mode and the
/// node affinity are upstream's (without `spec`); the source's message is its
/// first line (upstream appends a Go diff).
pub(crate) fn validate_pv_update(
    new: &PersistentVolume,
    old: &PersistentVolume,
    _path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let mut new_source = source_only(&new.spec);
    let old_source = source_only(&old.spec);
    // A CSI volume may gain a controller expand secret.
    if let (Some(new_csi), Some(old_csi)) = (&mut new_source.csi, &old_source.csi)
        && old_csi.controller_expand_secret_ref.is_none()
    {
        new_csi.controller_expand_secret_ref = None;
    }
    if !new_source.semantic_eq(&old_source) {
        errs.forbidden(
            FieldPath::new("spec").child("persistentvolumesource"),
            "spec.persistentvolumesource is immutable after creation",
        );
    }
    if new.spec.volume_mode != old.spec.volume_mode {
        errs.invalid(
            FieldPath::new("volumeMode"),
            new.spec.volume_mode.as_deref().unwrap_or_default(),
            "field is immutable",
        );
    }
    if let Some(old_affinity) = &old.spec.node_affinity {
        let unchanged = new
            .spec
            .node_affinity
            .as_ref()
            .is_some_and(|n| n == old_affinity || *n == beta_to_ga(old_affinity));
        if !unchanged {
            // Upstream prints the Go struct with its pointer.
            let value = match new.spec.node_affinity {
                Some(_) => "core.VolumeNodeAffinity{...}",
                None => "null",
            };
            errs.invalid(
                FieldPath::new("nodeAffinity"),
                Raw(value),
                "field is immutable, except for updating from beta label to GA",
            );
        }
    }
}

/// The volume source fields of a spec alone (`PersistentVolumeSource`).
fn source_only(spec: &PersistentVolumeSpec) -> PersistentVolumeSpec {
    PersistentVolumeSpec {
        gce_persistent_disk: spec.gce_persistent_disk.clone(),
        aws_elastic_block_store: spec.aws_elastic_block_store.clone(),
        host_path: spec.host_path.clone(),
        glusterfs: spec.glusterfs.clone(),
        nfs: spec.nfs.clone(),
        rbd: spec.rbd.clone(),
        iscsi: spec.iscsi.clone(),
        cinder: spec.cinder.clone(),
        cephfs: spec.cephfs.clone(),
        fc: spec.fc.clone(),
        flocker: spec.flocker.clone(),
        flex_volume: spec.flex_volume.clone(),
        azure_file: spec.azure_file.clone(),
        vsphere_volume: spec.vsphere_volume.clone(),
        quobyte: spec.quobyte.clone(),
        azure_disk: spec.azure_disk.clone(),
        photon_persistent_disk: spec.photon_persistent_disk.clone(),
        portworx_volume: spec.portworx_volume.clone(),
        scale_io: spec.scale_io.clone(),
        local: spec.local.clone(),
        storageos: spec.storageos.clone(),
        csi: spec.csi.clone(),
        ..PersistentVolumeSpec::default()
    }
}

/// The node affinity with its beta label keys replaced by the GA ones.
fn beta_to_ga(affinity: &VolumeNodeAffinity) -> VolumeNodeAffinity {
    let mut translated = affinity.clone();
    let terms = translated
        .required
        .iter_mut()
        .flat_map(|r| r.node_selector_terms.iter_mut());
    for term in terms {
        for req in term.match_expressions.iter_mut().flatten() {
            if let Some((_, ga)) = BETA_TO_GA.iter().find(|(beta, _)| *beta == req.key) {
                req.key = (*ga).to_owned();
            }
        }
    }
    translated
}
