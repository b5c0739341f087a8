//! The admission chain: kube-apiserver's built-in plugins behind one trait,
//! in upstream's order (`AllOrderedPlugins`). A plugin says which requests it
//! mutates and which it validates; the chain turns the object into JSON once
//! per phase for the plugins that handle it, and not at all when none does.
//! ResourceQuota, which upstream runs last, stays a stage of its own after
//! the chain: its charge is made right before the write and refunded when
//! the write fails.

use async_trait::async_trait;
use serde_json::Value;

use super::{
    Attributes, default_class, lifecycle, limit_ranger, node_restriction, node_taints,
    pod_security, priority, protection, runtime_class, service_account, toleration_seconds, update,
};
use crate::api_error::{ApiError, ApiResult};
use crate::loopback::Loopback;
use crate::user::UserInfo;
use crate::body::{Input, Object};
use crate::scope::{Endpoint, Scope};
use kapi_runtime::meta::ObjectMeta;

/// What a write does to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// A create.
    Create,
    /// An update or patch, through `endpoint`.
    Update,
    /// A delete.
    Delete,
}

/// The request a plugin sees besides the object (upstream's
/// `admission.Attributes`).
pub struct Request<'a> {
    /// What the write does.
    pub operation: Operation,
    /// The endpoint written through (`Main` for creates and deletes).
    pub endpoint: Endpoint,
    /// The kind, the name errors give and the namespace.
    pub attrs: Attributes<'a>,
    /// Who writes.
    pub user: &'a UserInfo,
}

impl<'a> Request<'a> {
    /// A request writing the object of `meta` in `scope`. Errors name the
    /// object, or its `generateName` while the name is still to be
    /// generated (as upstream).
    pub fn new(
        operation: Operation,
        endpoint: Endpoint,
        scope: Scope<'a>,
        meta: &ObjectMeta,
        user: &'a UserInfo,
    ) -> Request<'a> {
        let name = match meta.name.as_deref() {
            Some(name) if !name.is_empty() => name.to_owned(),
            _ => meta.generate_name.clone().unwrap_or_default(),
        };
        let namespace = meta.namespace.clone().filter(|ns| !ns.is_empty());
        Request {
            operation,
            endpoint,
            attrs: Attributes {
                scope,
                name,
                namespace,
            },
            user,
        }
    }

    /// A delete of `name` in `scope` (whose namespace is the object's).
    pub fn delete(scope: Scope<'a>, name: &str, user: &'a UserInfo) -> Request<'a> {
        Request {
            operation: Operation::Delete,
            endpoint: Endpoint::Main,
            attrs: Attributes {
                scope,
                name: name.to_owned(),
                namespace: scope.namespace.map(str::to_owned),
            },
            user,
        }
    }

    /// Whether the request writes `plural` of `group` (the core group is "").
    fn is(&self, group: &str, plural: &str) -> bool {
        let info = self.attrs.scope.info();
        (info.group, info.plural) == (group, plural)
    }

    fn main_update(&self) -> bool {
        self.operation == Operation::Update && self.endpoint == Endpoint::Main
    }
}

/// One admission plugin.
#[async_trait]
pub trait Plugin: Send + Sync {
    /// Upstream's name for it (`LimitRanger`, `PodSecurity`...).
    fn name(&self) -> &'static str;

    /// Whether [`Plugin::judge`] looks at this request.
    fn judges(&self, _request: &Request<'_>) -> bool {
        false
    }

    /// Refuses the request on what it addresses alone, without its object
    /// (a create in a namespace being deleted, a delete of a system
    /// object); these run first, before the object is shaped.
    async fn judge(&self, _request: &Request<'_>, _objects: &dyn Loopback) -> ApiResult<()> {
        Ok(())
    }

    /// Whether [`Plugin::admit`] looks at this request.
    fn mutates(&self, _request: &Request<'_>) -> bool {
        false
    }

    /// Whether [`Plugin::validate`] looks at this request.
    fn validates(&self, _request: &Request<'_>) -> bool {
        false
    }

    /// Shapes (or refuses) the object being written, in its JSON form;
    /// `old` is the stored object on an update.
    async fn admit(
        &self,
        _request: &Request<'_>,
        _object: &mut Value,
        _old: Option<&Value>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// Refuses (or warns about) the object about to be stored.
    async fn validate(
        &self,
        _request: &Request<'_>,
        _object: &Value,
        _old: Option<&Value>,
        _objects: &dyn Loopback,
        _warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        Ok(())
    }
}

/// The enabled plugins, in upstream's order.
pub struct Chain {
    plugins: Vec<Box<dyn Plugin>>,
}

impl Default for Chain {
    /// kube-apiserver's plugins that are on by default and that kapi has.
    fn default() -> Chain {
        Chain {
            plugins: vec![
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
        }
    }
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.plugins.iter().map(|p| p.name()).collect();
        f.debug_struct("Chain").field("plugins", &names).finish()
    }
}

impl Chain {
    /// The names of the plugins, in the order they run.
    pub fn names(&self) -> Vec<&'static str> {
        self.plugins.iter().map(|p| p.name()).collect()
    }

    /// The judging phase: the plugins that refuse a request on what it
    /// addresses alone, in order, without converting anything.
    pub async fn judge(&self, request: &Request<'_>, objects: &dyn Loopback) -> ApiResult<()> {
        for plugin in self.plugins.iter().filter(|p| p.judges(request)) {
            plugin.judge(request, objects).await?;
        }
        Ok(())
    }

    /// The mutating phase: every plugin that mutates the request shapes the
    /// object, which is turned into JSON (with its defaults, as upstream
    /// decodes) and back once, or not at all when none does.
    pub async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Object,
        old: Option<&Object>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let plugins: Vec<&dyn Plugin> = self
            .plugins
            .iter()
            .map(|p| &**p)
            .filter(|p| p.mutates(request))
            .collect();
        if plugins.is_empty() {
            return Ok(());
        }
        object.typed_mut().apply_defaults();
        let mut doc = object.to_value().map_err(ApiError::internal)?;
        let old = old
            .map(Object::to_value)
            .transpose()
            .map_err(ApiError::internal)?;
        for plugin in plugins {
            plugin
                .admit(request, &mut doc, old.as_ref(), objects)
                .await?;
        }
        *object = Input::from_value(request.attrs.scope.entry, doc)?.object;
        Ok(())
    }

    /// The validating phase: every plugin that validates the request looks
    /// at the object (turned into JSON once, or not at all); the first
    /// refusal wins.
    pub async fn validate(
        &self,
        request: &Request<'_>,
        object: &Object,
        old: Option<&Object>,
        objects: &dyn Loopback,
        warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let plugins: Vec<&dyn Plugin> = self
            .plugins
            .iter()
            .map(|p| &**p)
            .filter(|p| p.validates(request))
            .collect();
        if plugins.is_empty() {
            return Ok(());
        }
        let doc = object.to_value().map_err(ApiError::internal)?;
        let old = old
            .map(Object::to_value)
            .transpose()
            .map_err(ApiError::internal)?;
        for plugin in plugins {
            plugin
                .validate(request, &doc, old.as_ref(), objects, warnings)
                .await?;
        }
        Ok(())
    }
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
        object: &mut Value,
        old: Option<&Value>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
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
        object: &mut Value,
        _old: Option<&Value>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        limit_ranger::admit_pod(objects, &request.attrs, object).await
    }

    async fn validate(
        &self,
        request: &Request<'_>,
        object: &Value,
        old: Option<&Value>,
        objects: &dyn Loopback,
        _warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
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
        object: &mut Value,
        _old: Option<&Value>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
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
        object: &mut Value,
        _old: Option<&Value>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
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
        object: &Value,
        old: Option<&Value>,
        objects: &dyn Loopback,
        warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
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
        object: &mut Value,
        old: Option<&Value>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
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
        object: &Value,
        _old: Option<&Value>,
        objects: &dyn Loopback,
        _warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
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
        object: &mut Value,
        _old: Option<&Value>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
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
        object: &mut Value,
        _old: Option<&Value>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
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
        object: &mut Value,
        _old: Option<&Value>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
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
        object: &Value,
        old: Option<&Value>,
        objects: &dyn Loopback,
        _warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
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
        object: &mut Value,
        _old: Option<&Value>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
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
        object: &mut Value,
        _old: Option<&Value>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        default_class::admit_ingress(objects, object).await
    }
}
