//! Admission: the built-in plugins kube-apiserver runs on writes, without
//! webhooks (k8s.io/kubernetes/plugin/pkg/admission and the namespace
//! lifecycle plugin of k8s.io/apiserver), as one [`Chain`] of [`Plugin`]s.
//!
//! A create goes decode -> **judging** (the request alone) -> defaults ->
//! **mutating admission** -> PrepareForCreate -> validation -> **validating
//! admission** -> ResourceQuota -> storage; an update runs the same phases on
//! each attempt of the registry's update loop, a delete only the judging one.
//! The mutating plugins may change the object or refuse it; the validating
//! ones only refuse. They read the objects they depend on (ServiceAccounts,
//! PriorityClasses, StorageClasses, Namespaces...) through [`Loopback`](crate::loopback::Loopback), as
//! upstream's plugins read informers.
//!
//! Plugins run in upstream's order (`AllOrderedPlugins` of kube-apiserver):
//! the first refusal wins. They work on the object's JSON form: the server
//! knows kinds only through its scheme.

mod chain;
mod default_class;
mod lifecycle;
mod limit_ranger;
pub(crate) mod node_restriction;
mod node_taints;
mod pod_security;
mod priority;
mod protection;
mod resource_quota;
mod runtime_class;
mod service_account;
mod toleration_seconds;
mod update;

pub use chain::{Chain, Operation, Plugin, Request};


use serde_json::Value;

use crate::api_error::{ApiError, ApiResult, Target};
use crate::body::Object;
use crate::loopback::{Loopback, Resource};
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

/// ResourceQuota, the last stage of a create's validation (after the
/// chain): the charge to make right before the object is stored, when a
/// quota of its namespace constrains it.
pub(crate) async fn quota<'a>(
    objects: &dyn Loopback,
    scope: Scope<'a>,
    object: &Object,
    dry_run: bool,
) -> ApiResult<Option<resource_quota::Charge<'a>>> {
    let attrs = Attributes {
        scope,
        name: object.metadata().name().to_owned(),
        namespace: object.metadata().namespace.clone(),
    };
    if attrs.namespace.is_none() {
        return Ok(None);
    }
    let doc = object.to_value().map_err(ApiError::internal)?;
    resource_quota::admit(objects, &attrs, &doc, dry_run).await
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
