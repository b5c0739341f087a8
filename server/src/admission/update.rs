//! Admission of updates. The plugins read what they depend on (classes,
//! ranges, a namespace and its pods) through [`Objects`] on each attempt of
//! the registry's update loop, as upstream's plugins read informers.

use serde_json::{Value, json};

use super::{Attributes, Objects, limit_ranger, pod_security, priority, toleration_seconds};
use crate::api_error::{ApiError, ApiResult};
use crate::body::{Input, Object};
use crate::scope::{Endpoint, Scope};

const STORAGE_CLASSES: (&str, &str, &str) = ("storage.k8s.io", "v1", "storageclasses");

/// The mutating admission of an update through `endpoint`: a pod keeps the
/// priority admission gave it and tolerates unready nodes again.
pub(crate) fn admit_update(
    scope: Scope<'_>,
    old: &Object,
    new: &mut Object,
    endpoint: Endpoint,
) -> ApiResult<()> {
    if endpoint != Endpoint::Main || (scope.info().group, scope.info().plural) != ("", "pods") {
        return Ok(());
    }
    let old = old.to_value().map_err(ApiError::internal)?;
    let mut doc = new.to_value().map_err(ApiError::internal)?;
    for field in ["priority", "preemptionPolicy"] {
        if doc["spec"][field].is_null() && !old["spec"][field].is_null() {
            doc["spec"][field] = old["spec"][field].clone();
        }
    }
    toleration_seconds::admit_pod(&mut doc);
    *new = Input::from_value(scope.entry, doc)?.object;
    Ok(())
}

/// The validating admission of an update through `endpoint`: a claim grows
/// only when bound and its class allows it (PersistentVolumeClaimResize),
/// no second PriorityClass becomes the global default, a namespace's Pod
/// Security labels are valid (and warn of the pods a stricter level would
/// refuse).
pub(crate) async fn validate_update(
    objects: &dyn Objects,
    scope: Scope<'_>,
    (old, new): (&Object, &Object),
    endpoint: Endpoint,
    warnings: &mut Vec<String>,
) -> ApiResult<()> {
    let attrs = Attributes {
        scope,
        name: new.metadata().name().to_owned(),
        namespace: new.metadata().namespace.clone(),
    };
    let kind = (scope.info().group, scope.info().plural);
    if kind == ("", "pods") && pod_security::checks_update(endpoint) {
        let old = old.to_value().map_err(ApiError::internal)?;
        let new = new.to_value().map_err(ApiError::internal)?;
        if pod_security::significant_update(&old, &new) {
            let labels = pod_security::namespace_labels(objects, &attrs).await?;
            pod_security::check_pod(&attrs, &labels, &new, warnings)?;
        }
        return Ok(());
    }
    if endpoint != Endpoint::Main {
        return Ok(());
    }
    match kind {
        ("", "persistentvolumeclaims") => {
            // LimitRanger leaves objects being deleted alone (a range made
            // since must not keep a claim from losing its finalizers).
            let deleting = old.metadata().deletion_timestamp.is_some();
            let old = old.to_value().map_err(ApiError::internal)?;
            let new = new.to_value().map_err(ApiError::internal)?;
            if !deleting {
                let ranges = limit_ranger::limit_ranges(objects, &attrs).await?;
                limit_ranger::check(&attrs, &ranges, &new)?;
            }
            check_resize(objects, &attrs, &old, &new).await
        }
        ("scheduling.k8s.io", "priorityclasses") => {
            let doc = new.to_value().map_err(ApiError::internal)?;
            if doc["globalDefault"] != true {
                return Ok(());
            }
            match priority::default_class_name(objects).await? {
                Some(present) if present != attrs.name => {
                    Err(priority::second_default(scope, &attrs.name, &present))
                }
                _ => Ok(()),
            }
        }
        ("", "namespaces") => {
            let old = old.to_value().map_err(ApiError::internal)?;
            let new = new.to_value().map_err(ApiError::internal)?;
            pod_security::validate_namespace(&new)?;
            let more = pod_security::existing_pod_warnings(objects, &old, &new).await?;
            warnings.extend(more);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// PersistentVolumeClaimResize (plugin/pkg/admission/storage/persistentvolume/resize).
async fn check_resize(
    objects: &dyn Objects,
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
