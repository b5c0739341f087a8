//! Admission of updates. The registry's read-modify-write step cannot wait on
//! the store, so what the plugins need from other objects is read first
//! ([`UpdateFacts`]); a class changed in between is seen by the next write,
//! as upstream's plugins, which read informers, may also lag.

use serde_json::{Value, json};

use super::{Attributes, Objects, limit_ranger, pod_security, priority, toleration_seconds};
use crate::api_error::{ApiError, ApiResult};
use crate::body::{Input, Object};
use crate::scope::{Endpoint, Scope};

const STORAGE_CLASSES: (&str, &str, &str) = ("storage.k8s.io", "v1", "storageclasses");
const PODS: (&str, &str, &str) = ("", "v1", "pods");
const NAMESPACES: (&str, &str, &str) = ("", "v1", "namespaces");

/// What the update plugins of a kind read from other objects.
#[derive(Debug, Default)]
pub struct UpdateFacts {
    /// A claim's StorageClass, when it allows volume expansion.
    expandable_class: Option<String>,
    /// The name of the global default PriorityClass, if there is one.
    default_priority_class: Option<String>,
    /// The pods of a namespace, whose enforced Pod Security level may change.
    pods: Vec<Value>,
    /// The labels of a pod's namespace (its Pod Security levels).
    namespace_labels: Value,
    /// The LimitRanges of a claim's namespace.
    limit_ranges: Vec<Value>,
}

/// Reads what the admission of an update of `name` through `endpoint`
/// depends on.
pub(crate) async fn update_facts(
    objects: &dyn Objects,
    scope: Scope<'_>,
    name: &str,
    endpoint: Endpoint,
) -> ApiResult<UpdateFacts> {
    let mut facts = UpdateFacts::default();
    let is_pods = (scope.info().group, scope.info().plural) == ("", "pods");
    if is_pods && pod_security::checks_update(endpoint) {
        let ns = scope.namespace.unwrap_or_default();
        let namespace = objects.read(NAMESPACES, None, ns).await?;
        facts.namespace_labels =
            namespace.map_or(Value::Null, |mut ns| ns["metadata"]["labels"].take());
    }
    if endpoint != Endpoint::Main {
        return Ok(facts);
    }
    match (scope.info().group, scope.info().plural) {
        ("", "persistentvolumeclaims") => {
            let attrs = Attributes {
                scope,
                name: name.to_owned(),
                namespace: scope.namespace.map(str::to_owned),
            };
            facts.limit_ranges = limit_ranger::limit_ranges(objects, &attrs).await?;
            let info = scope.info();
            let claims = (info.group, info.version, info.plural);
            // The update itself answers for a missing claim.
            let Some(claim) = objects.read(claims, scope.namespace, name).await? else {
                return Ok(facts);
            };
            let class = claim_class(&claim);
            if class.is_empty() {
                return Ok(facts);
            }
            let class_object = objects.read(STORAGE_CLASSES, None, class).await?;
            if class_object.is_some_and(|sc| sc["allowVolumeExpansion"] == true) {
                facts.expandable_class = Some(class.to_owned());
            }
        }
        ("scheduling.k8s.io", "priorityclasses") => {
            facts.default_priority_class = priority::default_class_name(objects).await?;
        }
        ("", "namespaces") => {
            facts.pods = objects.read_all(PODS, Some(name)).await?;
        }
        _ => {}
    }
    Ok(facts)
}

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
pub(crate) fn validate_update(
    scope: Scope<'_>,
    facts: &UpdateFacts,
    (old, new): (&Object, &Object),
    endpoint: Endpoint,
    warnings: &mut Vec<String>,
) -> ApiResult<()> {
    if (scope.info().group, scope.info().plural) == ("", "pods")
        && pod_security::checks_update(endpoint)
    {
        let attrs = Attributes {
            scope,
            name: new.metadata().name().to_owned(),
            namespace: new.metadata().namespace.clone(),
        };
        let old = old.to_value().map_err(ApiError::internal)?;
        let new = new.to_value().map_err(ApiError::internal)?;
        if pod_security::significant_update(&old, &new) {
            pod_security::check_pod(&attrs, &facts.namespace_labels, &new, warnings)?;
        }
        return Ok(());
    }
    if endpoint != Endpoint::Main {
        return Ok(());
    }
    let attrs = Attributes {
        scope,
        name: new.metadata().name().to_owned(),
        namespace: new.metadata().namespace.clone(),
    };
    match (scope.info().group, scope.info().plural) {
        ("", "persistentvolumeclaims") => {
            // LimitRanger leaves objects being deleted alone (a range made
            // since must not keep a claim from losing its finalizers).
            let deleting = old.metadata().deletion_timestamp.is_some();
            let old = old.to_value().map_err(ApiError::internal)?;
            let new = new.to_value().map_err(ApiError::internal)?;
            if !deleting {
                limit_ranger::check(&attrs, &facts.limit_ranges, &new)?;
            }
            check_resize(&attrs, facts, &old, &new)
        }
        ("scheduling.k8s.io", "priorityclasses") => {
            let doc = new.to_value().map_err(ApiError::internal)?;
            match facts.default_priority_class.as_deref() {
                Some(present) if doc["globalDefault"] == true && present != attrs.name => {
                    Err(priority::second_default(scope, &attrs.name, present))
                }
                _ => Ok(()),
            }
        }
        ("", "namespaces") => {
            let old = old.to_value().map_err(ApiError::internal)?;
            let new = new.to_value().map_err(ApiError::internal)?;
            pod_security::validate_namespace(&new)?;
            warnings.extend(pod_security::existing_pod_warnings(&old, &new, &facts.pods));
            Ok(())
        }
        _ => Ok(()),
    }
}

/// PersistentVolumeClaimResize (plugin/pkg/admission/storage/persistentvolume/resize).
fn check_resize(
    attrs: &Attributes<'_>,
    facts: &UpdateFacts,
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
        && facts.expandable_class.as_deref() == Some(class);
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
