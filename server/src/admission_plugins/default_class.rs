//! DefaultStorageClass (plugin/pkg/admission/storage/storageclass/setdefault)
//! and DefaultIngressClass (plugin/pkg/admission/network/defaultingressclass):
//! a claim or an ingress created without a class gets the cluster's default
//! one, the class annotated as default (the newest, of several; by name on a
//! tie).

use serde_json::{Value, json};

use crate::admission::{Operation, Plugin, Request, Subject, View};
use crate::api_error::ApiResult;
use crate::loopback::Loopback;
use async_trait::async_trait;

const STORAGE_CLASSES: (&str, &str, &str) = ("storage.k8s.io", "v1", "storageclasses");
const INGRESS_CLASSES: (&str, &str, &str) = ("networking.k8s.io", "v1", "ingressclasses");

/// The annotations that make a StorageClass the default (GA and beta).
const DEFAULT_STORAGE_CLASS: &[&str] = &[
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
];

/// The annotation that makes an IngressClass the default.
const DEFAULT_INGRESS_CLASS: &[&str] = &["ingressclass.kubernetes.io/is-default-class"];

/// Gives a claim being created the default StorageClass, unless it has a
/// class (an empty `storageClassName` counts: it asks for none).
pub async fn admit_claim(objects: &dyn Loopback, claim: &mut Value) -> ApiResult<()> {
    let has_class = !claim["spec"]["storageClassName"].is_null()
        || !claim["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"].is_null();
    if has_class || !claim["spec"].is_object() {
        return Ok(());
    }
    if let Some(name) = default_class(objects, STORAGE_CLASSES, DEFAULT_STORAGE_CLASS).await? {
        claim["spec"]["storageClassName"] = json!(name);
    }
    Ok(())
}

/// Gives an ingress being created the default IngressClass, unless it has a
/// class (in its spec or its legacy annotation).
pub async fn admit_ingress(objects: &dyn Loopback, ingress: &mut Value) -> ApiResult<()> {
    let has_class = !ingress["spec"]["ingressClassName"].is_null()
        || !ingress["metadata"]["annotations"]["kubernetes.io/ingress.class"].is_null();
    if has_class || !ingress["spec"].is_object() {
        return Ok(());
    }
    if let Some(name) = default_class(objects, INGRESS_CLASSES, DEFAULT_INGRESS_CLASS).await? {
        ingress["spec"]["ingressClassName"] = json!(name);
    }
    Ok(())
}

/// The name of the default class of a kind: of those annotated `true`, the
/// newest, then the first by name.
async fn default_class(
    objects: &dyn Loopback,
    kind: (&str, &str, &str),
    annotations: &[&str],
) -> ApiResult<Option<String>> {
    let classes = objects.read_all(kind, None).await?;
    let mut defaults: Vec<(&str, &str)> = classes
        .iter()
        .filter(|class| {
            annotations
                .iter()
                .any(|key| class["metadata"]["annotations"][key] == "true")
        })
        .map(|class| {
            let meta = &class["metadata"];
            (
                meta["creationTimestamp"].as_str().unwrap_or_default(),
                meta["name"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    // RFC 3339 times in UTC, to the second, order as text.
    defaults.sort_by(|a, b| b.0.cmp(a.0).then(a.1.cmp(b.1)));
    Ok(defaults.first().map(|(_, name)| (*name).to_owned()))
}

/// DefaultStorageClass: a claim without a class gets the default one.
pub struct DefaultStorageClass;

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
        admit_claim(objects, object).await
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
        admit_ingress(objects, object).await
    }
}
