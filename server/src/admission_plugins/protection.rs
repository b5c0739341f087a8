//! StorageObjectInUseProtection (plugin/pkg/admission/storage/storageobjectinuseprotection):
//! claims and volumes get a finalizer on create, so that one in use by a pod
//! (or bound to a claim) is only removed once its controller lets it go.

use serde_json::{Value, json};

use super::array_at;
use crate::admission::{Operation, Plugin, Request, Subject, View};
use crate::api_error::ApiResult;
use crate::loopback::Loopback;
use async_trait::async_trait;

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

/// StorageObjectInUseProtection: claims and volumes get the finalizer that
/// keeps them while in use.
pub struct StorageObjectInUseProtection;

#[async_trait]
impl Plugin for StorageObjectInUseProtection {
    fn name(&self) -> &'static str {
        "StorageObjectInUseProtection"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Create
            && (request.is("", "persistentvolumeclaims") || request.is("", "persistentvolumes"))
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        let finalizer = if request.is("", "persistentvolumes") {
            VOLUME_FINALIZER
        } else {
            CLAIM_FINALIZER
        };
        admit(object, finalizer);
        Ok(())
    }
}
