//! Admission: the built-in plugins kube-apiserver runs on writes, without
//! webhooks (k8s.io/kubernetes/plugin/pkg/admission and the namespace
//! lifecycle plugin of k8s.io/apiserver).
//!
//! A create goes decode -> defaults -> **mutating admission** -> PrepareForCreate
//! -> validation -> **validating admission** -> storage. The mutating plugins may
//! change the object or refuse it; the validating ones only refuse. They read
//! the objects they depend on (ServiceAccounts, PriorityClasses, StorageClasses,
//! Namespaces...) through the objects, as upstream's plugins read informers.
//!
//! Plugins run in upstream's order (`AllOrderedPlugins` of kube-apiserver): the
//! first refusal wins. They work on the object's JSON form, as the registry's
//! other kind-specific steps do (eviction, tokens): the server knows kinds only
//! through its scheme.

mod default_class;
mod lifecycle;
mod limit_ranger;
mod node_taints;
mod objects;
mod pod_security;
mod priority;
mod protection;
mod resource_quota;
mod runtime_class;
mod service_account;
mod toleration_seconds;
mod update;

pub use objects::{Change, Objects, Resource};
pub(crate) use update::{admit_update, validate_update};

use kapi_runtime::ResourceInfo;
use serde_json::Value;

use crate::api_error::{ApiError, ApiResult, Target};
use crate::body::{Input, Object};
use crate::scope::Scope;

/// The objects admission relies on that every cluster has (the system
/// PriorityClasses), to create once the store is open.
pub fn bootstrap_objects() -> impl Iterator<Item = (Resource<'static>, Value)> {
    priority::system_classes()
}

/// What a plugin knows about the request besides the object.
#[derive(Clone)]
pub struct Attributes<'a> {
    /// The kind and namespace written.
    pub scope: Scope<'a>,
    /// The name errors give: the object's name, else its `generateName` (a
    /// create names nothing else yet).
    pub name: String,
    /// The namespace of the object (None for cluster-scoped kinds).
    pub namespace: Option<String>,
}

impl Attributes<'_> {
    /// 403 `<resource> "<name>" is forbidden: <why>` (admission.NewForbidden).
    pub fn forbidden(&self, why: &str) -> ApiError {
        let info = self.scope.info();
        ApiError::forbidden(
            Target {
                group: info.group,
                resource: info.plural,
                name: &self.name,
            },
            why,
        )
    }
}

/// Whether any mutating plugin changes objects of this kind on create (the
/// others skip the round trip through JSON).
fn mutates_on_create(info: &ResourceInfo) -> bool {
    matches!(
        (info.group, info.plural),
        (
            "",
            "pods" | "nodes" | "persistentvolumeclaims" | "persistentvolumes"
        ) | ("networking.k8s.io", "ingresses")
    )
}

/// The mutating admission of a create: the namespace must exist and not be
/// terminating, then the kind's plugins shape (or refuse) `object`, which
/// is the decoded body with its defaults. Errors name the object, or its
/// `generateName` when the name is still to be generated (as upstream).
pub(crate) async fn admit_create(
    objects: &dyn Objects,
    scope: Scope<'_>,
    object: &mut Object,
) -> ApiResult<()> {
    let meta = object.metadata();
    let name = match meta.name.as_deref() {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => meta.generate_name.clone().unwrap_or_default(),
    };
    let attrs = Attributes {
        scope,
        name,
        namespace: meta.namespace.clone().filter(|ns| !ns.is_empty()),
    };
    if let Some(ns) = attrs.namespace.as_deref() {
        lifecycle::admit_create(objects, &attrs, ns).await?;
    }
    if !mutates_on_create(scope.info()) {
        return Ok(());
    }
    // Upstream decodes with defaults, so plugins see a defaulted object.
    object.typed_mut().apply_defaults();
    let mut doc = object.to_value().map_err(ApiError::internal)?;
    match (scope.info().group, scope.info().plural) {
        ("", "pods") => {
            limit_ranger::admit_pod(objects, &attrs, &mut doc).await?;
            service_account::admit_pod(objects, &attrs, &mut doc).await?;
            priority::admit_pod(objects, &attrs, &mut doc).await?;
            toleration_seconds::admit_pod(&mut doc);
            runtime_class::admit_pod(objects, &attrs, &mut doc).await?;
        }
        ("", "nodes") => node_taints::admit_node(&mut doc),
        ("", "persistentvolumeclaims") => {
            default_class::admit_claim(objects, &mut doc).await?;
            protection::admit(&mut doc, protection::CLAIM_FINALIZER);
        }
        ("", "persistentvolumes") => protection::admit(&mut doc, protection::VOLUME_FINALIZER),
        ("networking.k8s.io", "ingresses") => {
            default_class::admit_ingress(objects, &mut doc).await?
        }
        _ => {}
    }
    *object = Input::from_value(scope.entry, doc)?.object;
    Ok(())
}

/// The validating admission of a create (the name is generated by now,
/// and errors give it, as upstream's): refusals of a valid object that
/// depend on other objects, then the quota check. Answers the quota
/// charge to make right before the object is stored.
pub(crate) async fn validate_create<'a>(
    objects: &dyn Objects,
    scope: Scope<'a>,
    object: &Object,
    dry_run: bool,
    warnings: &mut Vec<String>,
) -> ApiResult<Option<resource_quota::Charge<'a>>> {
    let attrs = Attributes {
        scope,
        name: object.metadata().name().to_owned(),
        namespace: object.metadata().namespace.clone(),
    };
    match (scope.info().group, scope.info().plural) {
        ("scheduling.k8s.io", "priorityclasses") => {
            priority::validate_class(objects, scope, object).await?;
        }
        ("", "pods") => {
            let doc = object.to_value().map_err(ApiError::internal)?;
            limit_ranger::validate(objects, &attrs, &doc).await?;
            pod_security::admit_pod(objects, &attrs, &doc, warnings).await?;
        }
        ("", "persistentvolumeclaims") => {
            let doc = object.to_value().map_err(ApiError::internal)?;
            limit_ranger::validate(objects, &attrs, &doc).await?;
        }
        ("", "namespaces") => {
            let doc = object.to_value().map_err(ApiError::internal)?;
            pod_security::validate_namespace(&doc)?;
        }
        (group, plural) => {
            if let Some(path) = pod_security::template_path(group, plural) {
                let doc = object.to_value().map_err(ApiError::internal)?;
                let pod = pod_security::pod_template(&doc, path);
                pod_security::admit_template(objects, &attrs, &pod, warnings).await?;
            }
        }
    }
    if attrs.namespace.is_none() {
        return Ok(None);
    }
    let doc = object.to_value().map_err(ApiError::internal)?;
    resource_quota::admit(objects, &attrs, &doc, dry_run).await
}

/// The admission of a delete: what may never be deleted.
pub(crate) fn admit_delete(scope: Scope<'_>, name: &str) -> ApiResult<()> {
    if (scope.info().group, scope.info().plural) == ("scheduling.k8s.io", "priorityclasses") {
        priority::admit_class_delete(scope, name)?;
    }
    Ok(())
}

/// The JSON array at `doc[key]`, made if absent.
fn array_at<'v>(doc: &'v mut Value, key: &str) -> Option<&'v mut Vec<Value>> {
    let object = doc.as_object_mut()?;
    let slot = object
        .entry(key.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
    if slot.is_null() {
        *slot = Value::Array(Vec::new());
    }
    slot.as_array_mut()
}
