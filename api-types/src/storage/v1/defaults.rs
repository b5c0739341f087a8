//! The defaults of storage/v1 that build lists
//! (k8s.io/kubernetes/pkg/apis/storage/v1/defaults.go); plain values are
//! `#[api(default = ...)]` on the fields.

use super::csidriver::CSIDriverSpec;

/// `SetDefaults_CSIDriver`: a driver without lifecycle modes serves persistent
/// volumes.
pub(super) fn default_csi_driver_spec(spec: &mut CSIDriverSpec) {
    if spec
        .volume_lifecycle_modes
        .as_ref()
        .is_none_or(|m| m.is_empty())
    {
        spec.volume_lifecycle_modes = Some(vec!["Persistent".to_owned()]);
    }
}
