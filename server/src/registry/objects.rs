//! The registry as the server's [`Loopback`]: reads of the current objects
//! (typed, or as JSON), and edits retried on conflict.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;

use super::{Endpoint, ListOptions, Object, Registry, Scope, WriteOptions};
use crate::api_error::{ApiError, ApiResult};
use crate::loopback::{Change as JsonChange, Loopback, ObjectChange, Resource};
use crate::store::ObjectRef;

#[async_trait]
impl Loopback for Registry {
    fn serves(&self, (group, version, plural): Resource<'_>) -> bool {
        self.scheme().get(group, version, plural).is_some()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn scale_of(
        &self,
        info: &'static kapi_runtime::ResourceInfo,
        object: &serde_json::Value,
    ) -> ApiResult<Option<serde_json::Value>> {
        info.scale
            .map(|facts| self.scale_of_value(facts, object))
            .transpose()
    }

    fn equivalents_of(
        &self,
        stored: &'static kapi_runtime::ResourceInfo,
    ) -> Vec<kapi_runtime::scheme::KindEntry> {
        let same = |info: &kapi_runtime::ResourceInfo| {
            (info.group, info.version, info.plural) == (stored.group, stored.version, stored.plural)
        };
        self.scheme()
            .entries()
            .filter(|e| same(e.info) || e.hub().is_some_and(same))
            .cloned()
            .collect()
    }

    fn resource_of_kind(&self, group: &str, version: &str, kind: &str) -> Option<(String, bool)> {
        self.scheme()
            .entries()
            .find(|e| {
                let info = e.info;
                (info.group, info.version, info.kind) == (group, version, kind)
            })
            .map(|e| (e.info.plural.to_owned(), e.info.namespaced))
    }

    async fn read_object(
        &self,
        (group, version, plural): Resource<'_>,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<Option<Object>> {
        let Some(entry) = self.scheme().get(group, version, plural).cloned() else {
            return Ok(None);
        };
        match self.get(Scope::new(&entry, namespace), name).await {
            Ok(object) => Ok(Some(without_managed_fields(object))),
            Err(e) if e.code() == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn read_all_objects(
        &self,
        (group, version, plural): Resource<'_>,
        namespace: Option<&str>,
    ) -> ApiResult<Vec<Object>> {
        let Some(entry) = self.scheme().get(group, version, plural).cloned() else {
            return Ok(Vec::new());
        };
        let page = self
            .list(Scope::new(&entry, namespace), ListOptions::default())
            .await?;
        page.items
            .into_iter()
            .map(|object| {
                let object = object.into_object().map_err(ApiError::internal)?;
                Ok(without_managed_fields(object))
            })
            .collect()
    }

    async fn read_all_shared(
        &self,
        (group, version, plural): Resource<'_>,
        namespace: Option<&str>,
    ) -> ApiResult<Vec<Arc<Object>>> {
        let Some(entry) = self.scheme().get(group, version, plural).cloned() else {
            return Ok(Vec::new());
        };
        let any = ListOptions {
            resource_version: Some("0".to_owned()),
            ..ListOptions::default()
        };
        let page = self.list(Scope::new(&entry, namespace), any).await?;
        page.items
            .iter()
            .map(
                |cached| match cached.object().map_err(ApiError::internal)? {
                    ObjectRef::Decoded(shared) => Ok(shared),
                    ObjectRef::Kept(object) => Ok(Arc::new(object.clone())),
                },
            )
            .collect()
    }

    async fn read_labels(
        &self,
        (group, version, plural): Resource<'_>,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<Option<BTreeMap<String, String>>> {
        let Some(entry) = self.scheme().get(group, version, plural).cloned() else {
            return Ok(None);
        };
        match self.get_shared(Scope::new(&entry, namespace), name).await {
            Ok(cached) => Ok(Some(
                cached
                    .labels()
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect(),
            )),
            Err(e) if e.code() == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn edit_status(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
        change: JsonChange<'_>,
    ) -> ApiResult<()> {
        self.edit_as_apiserver(
            resource,
            namespace,
            name,
            Endpoint::Status,
            Change::Json(change),
        )
        .await
    }

    async fn edit_object_status(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
        change: ObjectChange<'_>,
    ) -> ApiResult<()> {
        let change = Change::Object(change);
        self.edit_as_apiserver(resource, namespace, name, Endpoint::Status, change)
            .await
    }

    async fn edit(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
        change: JsonChange<'_>,
    ) -> ApiResult<()> {
        self.edit_as_apiserver(
            resource,
            namespace,
            name,
            Endpoint::Main,
            Change::Json(change),
        )
        .await
    }

    async fn edit_object(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
        change: ObjectChange<'_>,
    ) -> ApiResult<()> {
        let change = Change::Object(change);
        self.edit_as_apiserver(resource, namespace, name, Endpoint::Main, change)
            .await
    }
}

/// A change of the loopback, to the object's JSON or to its Rust value.
enum Change<'a> {
    Json(JsonChange<'a>),
    Object(ObjectChange<'a>),
}

impl Registry {
    /// Changes an object through `endpoint` as upstream's loopback client
    /// does (quota usage, a legacy token's last use, the bootstrap policy):
    /// recorded as kube-apiserver's.
    async fn edit_as_apiserver(
        &self,
        (group, version, plural): Resource<'_>,
        namespace: Option<&str>,
        name: &str,
        endpoint: Endpoint,
        change: Change<'_>,
    ) -> ApiResult<()> {
        let Some(entry) = self.scheme().get(group, version, plural).cloned() else {
            return Ok(());
        };
        let scope = Scope::new(&entry, namespace);
        let options = WriteOptions {
            manager: "kube-apiserver",
            ..WriteOptions::default()
        };
        match change {
            Change::Json(change) => self.edit(scope, name, endpoint, change, options).await,
            Change::Object(change) => {
                self.edit_object(scope, name, endpoint, change, options)
                    .await
            }
        }
        .map(drop)
    }
}

/// Admission never reads ownership: the JSON is made without it.
fn without_managed_fields(mut object: Object) -> Object {
    object.metadata_mut().managed_fields = None;
    object
}
