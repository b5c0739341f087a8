//! StorageObjectInUseProtection (plugin/pkg/admission/storage/storageobjectinuseprotection):
//! claims and volumes get a finalizer on create, so that one in use by a pod
//! (or bound to a claim) is only removed once its controller lets it go.

use serde_json::{Value, json};

use super::array_at;

/// The finalizer of PersistentVolumeClaims.
pub const CLAIM_FINALIZER: &str = "kubernetes.io/pvc-protection";

/// The finalizer of PersistentVolumes.
pub const VOLUME_FINALIZER: &str = "kubernetes.io/pv-protection";

/// Adds `finalizer` to an object being created, unless it has it.
pub fn admit(object: &mut Value, finalizer: &str) {
    let meta = &mut object["metadata"];
    let present = meta["finalizers"]
        .as_array()
        .is_some_and(|list| list.iter().any(|f| f == finalizer));
    if present || !meta.is_object() {
        return;
    }
    if let Some(finalizers) = array_at(meta, "finalizers") {
        finalizers.push(json!(finalizer));
    }
}
