//! What the plugins do on updates beyond their create rules: a pod keeps
//! its priority, a claim grows only as its class allows.

use kapi_api_types::core::v1::{PersistentVolumeClaim, Pod};
use kapi_api_types::storage::v1::StorageClass;

use crate::admission::{Attributes, Plugin, Request, View};
use crate::api_error::ApiResult;
use crate::loopback::{self, Loopback};
use async_trait::async_trait;

/// A pod update keeps the priority admission gave the pod (a client that
/// sends the spec it read before admission leaves them out).
pub(super) fn keep_priority(old: &Pod, new: &mut Pod) {
    if new.spec.priority.is_none() {
        new.spec.priority = old.spec.priority;
    }
    if new.spec.preemption_policy.is_none() {
        new.spec.preemption_policy = old.spec.preemption_policy.clone();
    }
}

/// PersistentVolumeClaimResize (plugin/pkg/admission/storage/persistentvolume/resize).
pub(super) async fn check_resize(
    objects: &dyn Loopback,
    attrs: &Attributes<'_>,
    old: &PersistentVolumeClaim,
    new: &PersistentVolumeClaim,
) -> ApiResult<()> {
    let size = |claim: &PersistentVolumeClaim| {
        let requests = claim.spec.resources.requests.as_ref();
        let text = requests
            .and_then(|r| r.get("storage"))
            .map_or("0", |q| q.0.as_str());
        kapi_runtime::quantity::nano_value(text).unwrap_or(0)
    };
    if size(new) <= size(old) {
        return Ok(());
    }
    if old.status.phase.as_deref() != Some("Bound") {
        return Err(attrs.forbidden("Only bound persistent volume claims can be expanded"));
    }
    let class = claim_class(new);
    let allowed = !class.is_empty()
        && class == claim_class(old)
        && loopback::get::<StorageClass>(objects, None, class)
            .await?
            .is_some_and(|sc| sc.allow_volume_expansion == Some(true));
    if !allowed {
        return Err(attrs.forbidden(
            "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
        ));
    }
    Ok(())
}

/// A claim's class: the beta annotation wins over `storageClassName`.
fn claim_class(claim: &PersistentVolumeClaim) -> &str {
    let annotations = claim.metadata.annotations.as_ref();
    annotations
        .and_then(|a| a.get("volume.beta.kubernetes.io/storage-class"))
        .or(claim.spec.storage_class_name.as_ref())
        .map_or("", String::as_str)
}

/// PersistentVolumeClaimResize: a claim grows only when bound and its class
/// allows expansion.
pub struct PersistentVolumeClaimResize;

#[async_trait]
impl Plugin for PersistentVolumeClaimResize {
    fn name(&self) -> &'static str {
        "PersistentVolumeClaimResize"
    }

    fn validates(&self, request: &Request<'_>) -> bool {
        request.main_update() && request.is_kind::<PersistentVolumeClaim>()
    }

    async fn validate(
        &self,
        request: &Request<'_>,
        object: &View<'_>,
        old: Option<&View<'_>>,
        objects: &dyn Loopback,
        _warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let old = old.and_then(|view| view.downcast_ref::<PersistentVolumeClaim>());
        match (old, object.downcast_ref::<PersistentVolumeClaim>()) {
            (Some(old), Some(new)) => check_resize(objects, &request.attrs, old, new).await,
            _ => Ok(()),
        }
    }
}
