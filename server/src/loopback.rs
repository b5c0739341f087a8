//! The server's client to itself: how admission plugins, authenticators and
//! authorizers read the objects they depend on (namespaces, quotas, service
//! accounts, secrets, roles) and make the few writes they need (a quota's
//! charge, a token's last use), through a narrow interface the registry
//! implements, as upstream's plugins read informers and write through the
//! loopback client. Objects come as their kinds' Rust values ([`get`],
//! [`list`], [`edit_status`] for a caller that names the kind), or as JSON for
//! one that cannot (a kind defined at run time).

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use kapi_runtime::Resource as Kind;

use crate::api_error::{ApiError, ApiResult};
use crate::body::Object;

/// A resource as `(group, version, plural)`, e.g. `("", "v1", "pods")`.
pub type Resource<'a> = (&'a str, &'a str, &'a str);

/// A change to an object's JSON form; an error refuses it.
pub type Change<'a> = &'a (dyn Fn(&mut Value) -> ApiResult<()> + Sync);

/// A change to an object as its kind's Rust value; an error refuses it.
pub type ObjectChange<'a> = &'a (dyn Fn(&mut Object) -> ApiResult<()> + Sync);

/// The objects admission plugins read.
#[async_trait]
pub trait Loopback: Send + Sync {
    /// Whether the server serves `resource` at all.
    fn serves(&self, resource: Resource<'_>) -> bool;

    /// What implements these reads, for a reader that needs more of it
    /// (the authorizers read the registry's caches); by default nothing it
    /// can use.
    fn as_any(&self) -> &dyn std::any::Any {
        &()
    }

    /// The resource (plural) serving kind `kind` of `group`/`version`, and
    /// whether it is namespaced; None when no served resource has it.
    fn resource_of_kind(
        &self,
        _group: &str,
        _version: &str,
        _kind: &str,
    ) -> Option<(String, bool)> {
        None
    }

    /// The autoscaling/v1 Scale of `object` (JSON of a kind with a `/scale`
    /// subresource described by `info`); None for a kind without one.
    fn scale_of(
        &self,
        _info: &'static kapi_runtime::ResourceInfo,
        _object: &Value,
    ) -> ApiResult<Option<Value>> {
        Ok(None)
    }

    /// Every served resource whose objects are stored as `stored`'s: its
    /// versions, and the same objects served by another group (core and
    /// events.k8s.io Events), as upstream's equivalent resources (those of
    /// one storage). An admission webhook or policy may be registered for
    /// another of them than a request's.
    fn equivalents_of(
        &self,
        _stored: &'static kapi_runtime::ResourceInfo,
    ) -> Vec<kapi_runtime::scheme::KindEntry> {
        Vec::new()
    }

    /// One object: None when it does not exist, or when the server does not
    /// serve the kind.
    async fn read(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<Option<Value>> {
        let object = self.read_object(resource, namespace, name).await?;
        object
            .map(|o| o.to_value().map_err(ApiError::internal))
            .transpose()
    }

    /// One object as its kind's Rust value (the version `resource` names):
    /// None when it does not exist, or when the server does not serve the
    /// kind. What [`get`] reads for a typed caller.
    async fn read_object(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<Option<Object>>;

    /// Every object of a kind as its Rust value, in `namespace` or
    /// cluster-wide; none when the server does not serve the kind.
    async fn read_all_objects(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
    ) -> ApiResult<Vec<Object>>;

    /// As [`Loopback::read_all_objects`], from whatever the server holds
    /// now, without waiting for the store's latest writes (what upstream's
    /// informers give a plugin), each object shared: decoded once and handed
    /// out again while anyone holds it. For state read on every write and
    /// kept by its reader.
    async fn read_all_shared(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
    ) -> ApiResult<Vec<Arc<Object>>> {
        let all = self.read_all_objects(resource, namespace).await?;
        Ok(all.into_iter().map(Arc::new).collect())
    }

    /// The labels of one object (None when it does not exist), read
    /// without decoding the object.
    async fn read_labels(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<Option<BTreeMap<String, String>>> {
        let object = self.read_object(resource, namespace, name).await?;
        Ok(object.map(|o| o.metadata().labels.clone().unwrap_or_default()))
    }

    /// Every object of a kind, in `namespace` or cluster-wide; none when the
    /// server does not serve the kind.
    async fn read_all(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
    ) -> ApiResult<Vec<Value>> {
        let objects = self.read_all_objects(resource, namespace).await?;
        objects
            .iter()
            .map(|o| o.to_value().map_err(ApiError::internal))
            .collect()
    }

    /// Changes an object's status (through its `/status` endpoint, retried on
    /// conflict): how the quota plugin charges usage. A missing object is a
    /// 404; a kind the server does not serve changes nothing.
    async fn edit_status(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
        change: Change<'_>,
    ) -> ApiResult<()>;

    /// [`Loopback::edit_status`] of the object as its kind's Rust value
    /// (the version `resource` names); what [`edit_status`] makes typed.
    async fn edit_object_status(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
        change: ObjectChange<'_>,
    ) -> ApiResult<()>;

    /// [`Loopback::edit`] of the object as its kind's Rust value (the
    /// version `resource` names); what [`edit`] makes typed.
    async fn edit_object(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
        change: ObjectChange<'_>,
    ) -> ApiResult<()>;

    /// Changes an object (retried on conflict), as the API server's own
    /// client: how authentication records a legacy token's last use. A
    /// missing object is a 404; a kind the server does not serve changes
    /// nothing.
    async fn edit(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
        change: Change<'_>,
    ) -> ApiResult<()>;
}

/// The resource of the kind `K` in `K`'s own version.
fn resource_of<K: Kind>() -> Resource<'static> {
    let info = K::INFO;
    (info.group, info.version, info.plural)
}

/// The object `K` value out of a typed read.
fn typed<K: Kind>(object: Object) -> ApiResult<K> {
    object
        .into_typed()
        .into_any()
        .downcast::<K>()
        .map(|k| *k)
        .map_err(|_| ApiError::internal(format!("a {} read as another type", K::INFO.kind)))
}

/// Whether the server serves the kind `K` (in `K`'s version).
pub fn serves<K: Kind>(objects: &dyn Loopback) -> bool {
    objects.serves(resource_of::<K>())
}

/// The object `name` of the kind `K`, typed: the resource is the kind's own
/// (no group or plural written by hand), the object its Rust value.
pub async fn get<K: Kind>(
    objects: &dyn Loopback,
    namespace: Option<&str>,
    name: &str,
) -> ApiResult<Option<K>> {
    match objects
        .read_object(resource_of::<K>(), namespace, name)
        .await?
    {
        Some(object) => typed(object).map(Some),
        None => Ok(None),
    }
}

/// Every object of the kind `K`, typed, in `namespace` or cluster-wide.
pub async fn list<K: Kind>(objects: &dyn Loopback, namespace: Option<&str>) -> ApiResult<Vec<K>> {
    let all = objects
        .read_all_objects(resource_of::<K>(), namespace)
        .await?;
    all.into_iter().map(typed).collect()
}

/// Every object of the kind `K`, shared (see [`Loopback::read_all_shared`]):
/// the scheme's objects, each a `K` (read it with `downcast_ref::<K>()`).
pub async fn list_shared<K: Kind>(
    objects: &dyn Loopback,
    namespace: Option<&str>,
) -> ApiResult<Vec<Arc<Object>>> {
    objects.read_all_shared(resource_of::<K>(), namespace).await
}

/// The labels of object `name` of the kind `K` (see
/// [`Loopback::read_labels`]).
pub async fn labels<K: Kind>(
    objects: &dyn Loopback,
    namespace: Option<&str>,
    name: &str,
) -> ApiResult<Option<BTreeMap<String, String>>> {
    objects
        .read_labels(resource_of::<K>(), namespace, name)
        .await
}

/// `change` of a `K` as a change of the scheme's object.
fn typed_change<K: Kind>(
    change: &(dyn Fn(&mut K) -> ApiResult<()> + Sync),
) -> impl Fn(&mut Object) -> ApiResult<()> + Sync + '_ {
    move |object: &mut Object| match object.downcast_mut::<K>() {
        Some(typed) => change(typed),
        None => Err(ApiError::internal(format!(
            "a {} read as another type",
            K::INFO.kind
        ))),
    }
}

/// Changes the status of object `name` of the kind `K` as its Rust value
/// (through `/status`, retried on conflict): a missing object is a 404; a
/// kind the server does not serve changes nothing.
pub async fn edit_status<K: Kind>(
    objects: &dyn Loopback,
    namespace: Option<&str>,
    name: &str,
    change: &(dyn Fn(&mut K) -> ApiResult<()> + Sync),
) -> ApiResult<()> {
    let change = typed_change(change);
    objects
        .edit_object_status(resource_of::<K>(), namespace, name, &change)
        .await
}

/// Changes object `name` of the kind `K` as its Rust value (retried on
/// conflict), as the API server's own client: a missing object is a 404; a
/// kind the server does not serve changes nothing.
pub async fn edit<K: Kind>(
    objects: &dyn Loopback,
    namespace: Option<&str>,
    name: &str,
    change: &(dyn Fn(&mut K) -> ApiResult<()> + Sync),
) -> ApiResult<()> {
    let change = typed_change(change);
    objects
        .edit_object(resource_of::<K>(), namespace, name, &change)
        .await
}
