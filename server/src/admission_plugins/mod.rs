//! Kubernetes' built-in admission plugins (k8s.io/kubernetes/plugin/pkg/admission
//! and the namespace lifecycle plugin of k8s.io/apiserver), assembled by
//! [`builtin`] into one [`Chain`] in upstream's order (`AllOrderedPlugins`).
//! The first refusal wins.
//!
//! Each plugin reads the objects it depends on (ServiceAccounts,
//! PriorityClasses, StorageClasses, Namespaces...) through the
//! [`Loopback`], as upstream's plugins read informers. The adapters below
//! say which requests each plugin handles.

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

use async_trait::async_trait;
use serde_json::Value;

use crate::admission::{
    Attributes, Chain, Operation, Plugin, Quota, QuotaCharge, Request, Subject, View,
};
use crate::api_error::{ApiError, ApiResult};
use crate::body::Object;
use crate::loopback::{Loopback, Resource};
use crate::scope::{Endpoint, Scope};

/// kube-apiserver's plugins that are on by default and that kapi has, in
/// upstream's order, with ResourceQuota as the quota stage.
pub fn builtin() -> Chain {
    Chain::new(
        vec![
            Box::new(NamespaceLifecycle),
            Box::new(LimitRanger),
            Box::new(ServiceAccount),
            Box::new(NodeRestriction),
            Box::new(TaintNodesByCondition),
            Box::new(PodSecurity),
            Box::new(Priority),
            Box::new(DefaultTolerationSeconds),
            Box::new(DefaultStorageClass),
            Box::new(StorageObjectInUseProtection),
            Box::new(PersistentVolumeClaimResize),
            Box::new(RuntimeClass),
            Box::new(DefaultIngressClass),
        ],
        Some(Box::new(ResourceQuota)),
    )
}

/// The objects admission relies on that every cluster has (the system
/// PriorityClasses), to create once the store is open.
pub fn bootstrap_objects() -> impl Iterator<Item = (Resource<'static>, Value)> {
    priority::system_classes()
}

/// ResourceQuota, the quota stage of a create (after the chain): the charge
/// to make right before the object is stored, when a quota of its namespace
/// constrains it.
struct ResourceQuota;

#[async_trait]
impl Quota for ResourceQuota {
    async fn reserve<'a>(
        &self,
        objects: &dyn Loopback,
        scope: Scope<'a>,
        object: &Object,
        dry_run: bool,
    ) -> ApiResult<Option<Box<dyn QuotaCharge + 'a>>> {
        let attrs = Attributes {
            scope,
            name: object.metadata().name().to_owned(),
            namespace: object.metadata().namespace.clone(),
        };
        if attrs.namespace.is_none() {
            return Ok(None);
        }
        let doc = object.to_value().map_err(ApiError::internal)?;
        let charge = resource_quota::admit(objects, &attrs, &doc, dry_run).await?;
        Ok(charge.map(|c| Box::new(c) as Box<dyn QuotaCharge + 'a>))
    }
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

/// NamespaceLifecycle: nothing is created in a namespace that is missing or
/// being deleted.
struct NamespaceLifecycle;

#[async_trait]
impl Plugin for NamespaceLifecycle {
    fn name(&self) -> &'static str {
        "NamespaceLifecycle"
    }

    fn judges(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Create && request.attrs.namespace.is_some()
    }

    async fn judge(&self, request: &Request<'_>, objects: &dyn Loopback) -> ApiResult<()> {
        let ns = request.attrs.namespace.as_deref().unwrap_or_default();
        lifecycle::admit_create(objects, &request.attrs, ns).await
    }
}

/// NodeRestriction: a kubelet writes only for its own node.
struct NodeRestriction;

#[async_trait]
impl Plugin for NodeRestriction {
    fn name(&self) -> &'static str {
        "NodeRestriction"
    }

    fn judges(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Delete && node_restriction::applies(request)
    }

    async fn judge(&self, request: &Request<'_>, objects: &dyn Loopback) -> ApiResult<()> {
        node_restriction::judge(request, objects).await
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.operation != Operation::Delete && node_restriction::applies(request)
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        let old = old.map(View::json).transpose()?;
        node_restriction::admit(request, object, old, objects).await
    }
}

/// LimitRanger: pods and claims get the defaults of their namespace's
/// ranges, and are refused outside them.
struct LimitRanger;

#[async_trait]
impl Plugin for LimitRanger {
    fn name(&self) -> &'static str {
        "LimitRanger"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Create && request.is("", "pods")
    }

    fn validates(&self, request: &Request<'_>) -> bool {
        let claims = request.is("", "persistentvolumeclaims");
        match request.operation {
            Operation::Create => request.is("", "pods") || claims,
            Operation::Update => request.main_update() && claims,
            Operation::Delete => false,
        }
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        limit_ranger::admit_pod(objects, &request.attrs, object).await
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
        // Objects being deleted are left alone (a range made since must not
        // keep a claim from losing its finalizers).
        if old.is_some_and(|old| !old["metadata"]["deletionTimestamp"].is_null()) {
            return Ok(());
        }
        limit_ranger::validate(objects, &request.attrs, object).await
    }
}

/// ServiceAccount: a pod runs as an account that exists, with its token
/// mounted and its pull secrets.
struct ServiceAccount;

#[async_trait]
impl Plugin for ServiceAccount {
    fn name(&self) -> &'static str {
        "ServiceAccount"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Create && request.is("", "pods")
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        service_account::admit_pod(objects, &request.attrs, object).await
    }
}

/// TaintNodesByCondition: a new node is tainted not-ready.
struct TaintNodesByCondition;

#[async_trait]
impl Plugin for TaintNodesByCondition {
    fn name(&self) -> &'static str {
        "TaintNodesByCondition"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Create && request.is("", "nodes")
    }

    async fn admit(
        &self,
        _request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        node_taints::admit_node(object);
        Ok(())
    }
}

/// PodSecurity: pods (and pod templates, with warnings only) against their
/// namespace's levels; a namespace's level labels.
struct PodSecurity;

#[async_trait]
impl Plugin for PodSecurity {
    fn name(&self) -> &'static str {
        "PodSecurity"
    }

    fn validates(&self, request: &Request<'_>) -> bool {
        let info = request.attrs.scope.info();
        match request.operation {
            Operation::Create => {
                request.is("", "pods")
                    || request.is("", "namespaces")
                    || pod_security::template_path(info.group, info.plural).is_some()
            }
            Operation::Update => {
                (request.is("", "pods") && pod_security::checks_update(request.endpoint))
                    || (request.is("", "namespaces") && request.endpoint == Endpoint::Main)
            }
            Operation::Delete => false,
        }
    }

    async fn validate(
        &self,
        request: &Request<'_>,
        object: &View<'_>,
        old: Option<&View<'_>>,
        objects: &dyn Loopback,
        warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let object = object.json()?;
        let old = old.map(View::json).transpose()?;
        let attrs = &request.attrs;
        if request.is("", "namespaces") {
            pod_security::validate_namespace(object)?;
            if let Some(old) = old {
                let more = pod_security::existing_pod_warnings(objects, old, object).await?;
                warnings.extend(more);
            }
            return Ok(());
        }
        if request.is("", "pods") {
            return match old {
                None => pod_security::admit_pod(objects, attrs, object, warnings).await,
                Some(old) if pod_security::significant_update(old, object) => {
                    let labels = pod_security::namespace_labels(objects, attrs).await?;
                    pod_security::check_pod(attrs, &labels, object, warnings)
                }
                Some(_) => Ok(()),
            };
        }
        let info = attrs.scope.info();
        match pod_security::template_path(info.group, info.plural) {
            Some(path) => {
                let pod = pod_security::pod_template(object, path);
                pod_security::admit_template(objects, attrs, &pod, warnings).await
            }
            None => Ok(()),
        }
    }
}

/// Priority: a pod gets its class's priority; a class cannot be a second
/// global default, nor a system class be deleted.
struct Priority;

#[async_trait]
impl Plugin for Priority {
    fn name(&self) -> &'static str {
        "Priority"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.is("", "pods") && (request.operation == Operation::Create || request.main_update())
    }

    fn judges(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Delete && request.is("scheduling.k8s.io", "priorityclasses")
    }

    async fn judge(&self, request: &Request<'_>, _objects: &dyn Loopback) -> ApiResult<()> {
        priority::admit_class_delete(request.attrs.scope, &request.attrs.name)
    }

    fn validates(&self, request: &Request<'_>) -> bool {
        request.is("scheduling.k8s.io", "priorityclasses")
            && (request.operation == Operation::Create || request.main_update())
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        let old = old.map(View::json).transpose()?;
        match old {
            None => priority::admit_pod(objects, &request.attrs, object).await,
            // An update keeps the priority admission gave the pod.
            Some(old) => {
                update::keep_priority(old, object);
                Ok(())
            }
        }
    }

    async fn validate(
        &self,
        request: &Request<'_>,
        object: &View<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
        _warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let object = object.json()?;
        let attrs = &request.attrs;
        if object["globalDefault"] != true {
            return Ok(());
        }
        // An update may keep the class that is the default already.
        let updated = request.operation == Operation::Update;
        match priority::default_class_name(objects).await? {
            Some(present) if !(updated && present == attrs.name) => {
                Err(priority::second_default(attrs.scope, &attrs.name, &present))
            }
            _ => Ok(()),
        }
    }
}

/// DefaultTolerationSeconds: pods tolerate unready and unreachable nodes for
/// five minutes unless they say otherwise.
struct DefaultTolerationSeconds;

#[async_trait]
impl Plugin for DefaultTolerationSeconds {
    fn name(&self) -> &'static str {
        "DefaultTolerationSeconds"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.is("", "pods") && (request.operation == Operation::Create || request.main_update())
    }

    async fn admit(
        &self,
        _request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        toleration_seconds::admit_pod(object);
        Ok(())
    }
}

/// DefaultStorageClass: a claim without a class gets the default one.
struct DefaultStorageClass;

#[async_trait]
impl Plugin for DefaultStorageClass {
    fn name(&self) -> &'static str {
        "DefaultStorageClass"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Create && request.is("", "persistentvolumeclaims")
    }

    async fn admit(
        &self,
        _request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        default_class::admit_claim(objects, object).await
    }
}

/// StorageObjectInUseProtection: claims and volumes get the finalizer that
/// keeps them while in use.
struct StorageObjectInUseProtection;

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
            protection::VOLUME_FINALIZER
        } else {
            protection::CLAIM_FINALIZER
        };
        protection::admit(object, finalizer);
        Ok(())
    }
}

/// PersistentVolumeClaimResize: a claim grows only when bound and its class
/// allows expansion.
struct PersistentVolumeClaimResize;

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
            Some(old) => update::check_resize(objects, &request.attrs, old, object).await,
            None => Ok(()),
        }
    }
}

/// RuntimeClass: a pod's runtime class exists, and adds its overhead and
/// scheduling constraints.
struct RuntimeClass;

#[async_trait]
impl Plugin for RuntimeClass {
    fn name(&self) -> &'static str {
        "RuntimeClass"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Create && request.is("", "pods")
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        runtime_class::admit_pod(objects, &request.attrs, object).await
    }
}

/// DefaultIngressClass: an ingress without a class gets the default one.
struct DefaultIngressClass;

#[async_trait]
impl Plugin for DefaultIngressClass {
    fn name(&self) -> &'static str {
        "DefaultIngressClass"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Create && request.is("networking.k8s.io", "ingresses")
    }

    async fn admit(
        &self,
        _request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        default_class::admit_ingress(objects, object).await
    }
}
