//! DefaultStorageClass (plugin/pkg/admission/storage/storageclass/setdefault)
//! and DefaultIngressClass (plugin/pkg/admission/network/defaultingressclass):
//! a claim or an ingress created without a class gets the cluster's default
//! one, the class annotated as default (the newest, of several; by name on a
//! tie).

use kapi_api_types::core::v1::PersistentVolumeClaim;
use kapi_api_types::networking::v1::{Ingress, IngressClass};
use kapi_api_types::storage::v1::StorageClass;
use kapi_runtime::Resource as Kind;
use kapi_runtime::meta::ObjectMeta;

use crate::admission::{Operation, Plugin, Request, Subject, View};
use crate::api_error::ApiResult;
use crate::loopback::{self, Loopback};
use async_trait::async_trait;

/// The annotations that make a StorageClass the default (GA and beta).
const DEFAULT_STORAGE_CLASS: &[&str] = &[
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
];

/// The annotation that makes an IngressClass the default.
const DEFAULT_INGRESS_CLASS: &[&str] = &["ingressclass.kubernetes.io/is-default-class"];

/// Whether `meta` carries the annotation `key`.
fn annotated(meta: &ObjectMeta, key: &str) -> bool {
    meta.annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(key))
}

/// Gives a claim being created the default StorageClass, unless it has a
/// class (an empty `storageClassName` counts: it asks for none).
pub async fn admit_claim(
    objects: &dyn Loopback,
    claim: &mut PersistentVolumeClaim,
) -> ApiResult<()> {
    let has_class = claim.spec.storage_class_name.is_some()
        || annotated(&claim.metadata, "volume.beta.kubernetes.io/storage-class");
    if has_class {
        return Ok(());
    }
    let classes = loopback::list::<StorageClass>(objects, None).await?;
    let metas = classes.iter().map(|class| &class.metadata);
    if let Some(name) = default_class(metas, DEFAULT_STORAGE_CLASS) {
        claim.spec.storage_class_name = Some(name);
    }
    Ok(())
}

/// Gives an ingress being created the default IngressClass, unless it has a
/// class (in its spec or its legacy annotation).
pub async fn admit_ingress(objects: &dyn Loopback, ingress: &mut Ingress) -> ApiResult<()> {
    let has_class = ingress.spec.ingress_class_name.is_some()
        || annotated(&ingress.metadata, "kubernetes.io/ingress.class");
    if has_class {
        return Ok(());
    }
    let classes = loopback::list::<IngressClass>(objects, None).await?;
    let metas = classes.iter().map(|class| &class.metadata);
    if let Some(name) = default_class(metas, DEFAULT_INGRESS_CLASS) {
        ingress.spec.ingress_class_name = Some(name);
    }
    Ok(())
}

/// The name of the default class among `classes`: of those annotated
/// `true`, the newest, then the first by name.
fn default_class<'c>(
    classes: impl Iterator<Item = &'c ObjectMeta>,
    annotations: &[&str],
) -> Option<String> {
    let mut defaults: Vec<&ObjectMeta> = classes
        .filter(|meta| {
            let values = meta.annotations.as_ref();
            annotations.iter().any(|key| {
                values
                    .and_then(|a| a.get(*key))
                    .is_some_and(|v| v == "true")
            })
        })
        .collect();
    defaults.sort_by(|a, b| {
        b.creation_timestamp
            .cmp(&a.creation_timestamp)
            .then(a.name.cmp(&b.name))
    });
    defaults.first().map(|meta| meta.name().to_owned())
}

/// Whether the request creates an object of the kind `K`.
fn creates<K: Kind>(request: &Request<'_>) -> bool {
    request.operation == Operation::Create && request.is_kind::<K>()
}

/// DefaultStorageClass: a claim without a class gets the default one.
pub struct DefaultStorageClass;

#[async_trait]
impl Plugin for DefaultStorageClass {
    fn name(&self) -> &'static str {
        "DefaultStorageClass"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        creates::<PersistentVolumeClaim>(request)
    }

    async fn admit(
        &self,
        _request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        match object.downcast_mut::<PersistentVolumeClaim>()? {
            Some(claim) => admit_claim(objects, claim).await,
            None => Ok(()),
        }
    }
}

/// DefaultIngressClass: an ingress without a class gets the default one.
pub struct DefaultIngressClass;

#[async_trait]
impl Plugin for DefaultIngressClass {
    fn name(&self) -> &'static str {
        "DefaultIngressClass"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        creates::<Ingress>(request)
    }

    async fn admit(
        &self,
        _request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        match object.downcast_mut::<Ingress>()? {
            Some(ingress) => admit_ingress(objects, ingress).await,
            None => Ok(()),
        }
    }
}
