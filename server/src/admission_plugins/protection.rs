//! StorageObjectInUseProtection (plugin/pkg/admission/storage/storageobjectinuseprotection):
//! claims and volumes get a finalizer on create, so that one in use by a pod
//! (or bound to a claim) is only removed once its controller lets it go.

use kapi_api_types::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kapi_runtime::meta::ObjectMeta;

use crate::admission::{Operation, Plugin, Request, Subject, View};
use crate::api_error::ApiResult;
use crate::loopback::Loopback;
use async_trait::async_trait;

/// The finalizer of PersistentVolumeClaims.
pub const CLAIM_FINALIZER: &str = "kubernetes.io/pvc-protection";

/// The finalizer of PersistentVolumes.
pub const VOLUME_FINALIZER: &str = "kubernetes.io/pv-protection";

/// Adds `finalizer` to an object being created, unless it has it.
pub fn admit(meta: &mut ObjectMeta, finalizer: &str) {
    let finalizers = meta.finalizers.get_or_insert_with(Vec::new);
    if !finalizers.iter().any(|f| f == finalizer) {
        finalizers.push(finalizer.to_owned());
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
            && (request.is_kind::<PersistentVolumeClaim>() || request.is_kind::<PersistentVolume>())
    }

    async fn admit(
        &self,
        _request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
        if let Some(claim) = object.downcast_mut::<PersistentVolumeClaim>()? {
            admit(&mut claim.metadata, CLAIM_FINALIZER);
        } else if let Some(volume) = object.downcast_mut::<PersistentVolume>()? {
            admit(&mut volume.metadata, VOLUME_FINALIZER);
        }
        Ok(())
    }
}
