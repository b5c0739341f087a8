//! What the plugins do on updates beyond their create rules: a pod keeps
//! its priority, a claim grows only as its class allows.

use kapi_api_types::core::v1::Pod;
use serde_json::{Value, json};

use crate::admission::{Attributes, Plugin, Request, View};
use crate::api_error::ApiResult;
use crate::loopback::Loopback;
use async_trait::async_trait;

const STORAGE_CLASSES: (&str, &str, &str) = ("storage.k8s.io", "v1", "storageclasses");

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
    old: &Value,
    new: &Value,
) -> ApiResult<()> {
    let size = |claim: &Value| {
        let text = claim["spec"]["resources"]["requests"]["storage"]
            .as_str()
            .unwrap_or("0");
        kapi_runtime::quantity::nano_value(text).unwrap_or(0)
    };
    if size(new) <= size(old) {
        return Ok(());
    }
    if old["status"]["phase"] != json!("Bound") {
        return Err(attrs.forbidden("Only bound persistent volume claims can be expanded"));
    }
    let class = claim_class(new);
    let allowed = !class.is_empty()
        && class == claim_class(old)
        && objects
            .read(STORAGE_CLASSES, None, class)
            .await?
            .is_some_and(|sc| sc["allowVolumeExpansion"] == true);
    if !allowed {
        return Err(attrs.forbidden(
            "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
        ));
    }
    Ok(())
}

/// A claim's class: the beta annotation wins over `storageClassName`.
fn claim_class(claim: &Value) -> &str {
    claim["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"]
        .as_str()
        .or_else(|| claim["spec"]["storageClassName"].as_str())
        .unwrap_or_default()
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
        request.main_update() && request.is("", "persistentvolumeclaims")
    }

    async fn validate(
        &self,
        request: &Request<'_>,
        object: &View<'_>,
        old: Option<&View<'_>>,
        objects: &dyn Loopback,
        _warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let object = object.json()?;
        let old = old.map(View::json).transpose()?;
        match old {
            Some(old) => check_resize(objects, &request.attrs, old, object).await,
            None => Ok(()),
        }
    }
}
