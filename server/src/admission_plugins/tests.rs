//! The built-in chain on a pod create: typed all the way, whatever the
//! plugins have to look at (limit ranges, quotas, Pod Security levels).

#![allow(clippy::unwrap_used)]

use kapi_api_types::core::v1::Pod;
use kapi_runtime::scheme::{KindEntry, Scheme};
use serde_json::{Value, json};

use crate::admission::{Chain, Operation, Request, json_forms_made};
use crate::api_error::ApiResult;
use crate::body::{Input, Object};
use crate::loopback::{Change, Loopback, Resource};
use crate::scope::{Endpoint, Scope};
use crate::user::UserInfo;

/// A server with namespace `ns`, its `default` ServiceAccount and the
/// objects given.
struct Objects(Vec<(Resource<'static>, Value)>);

impl Objects {
    fn with(extra: Vec<(Resource<'static>, Value)>) -> Objects {
        let mut objects = vec![
            (
                ("", "v1", "namespaces"),
                json!({"metadata": {"name": "ns"}}),
            ),
            (
                ("", "v1", "serviceaccounts"),
                json!({"metadata": {"name": "default", "namespace": "ns"}}),
            ),
        ];
        objects.extend(extra);
        Objects(objects)
    }
}

#[async_trait::async_trait]
impl Loopback for Objects {
    fn serves(&self, _: Resource<'_>) -> bool {
        true
    }
    async fn read(
        &self,
        resource: Resource<'_>,
        _: Option<&str>,
        name: &str,
    ) -> ApiResult<Option<Value>> {
        let found = self
            .0
            .iter()
            .find(|(r, o)| *r == resource && o["metadata"]["name"] == name);
        Ok(found.map(|(_, o)| o.clone()))
    }
    async fn read_all(&self, resource: Resource<'_>, _: Option<&str>) -> ApiResult<Vec<Value>> {
        let all = self.0.iter().filter(|(r, _)| *r == resource);
        Ok(all.map(|(_, o)| o.clone()).collect())
    }
    async fn read_object(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<Option<Object>> {
        let found = self.read(resource, namespace, name).await?;
        found.map(|value| typed(resource, value)).transpose()
    }
    async fn read_all_objects(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
    ) -> ApiResult<Vec<Object>> {
        let all = self.read_all(resource, namespace).await?;
        all.into_iter()
            .map(|value| typed(resource, value))
            .collect()
    }
    async fn edit_object(
        &self,
        _: Resource<'_>,
        _: Option<&str>,
        _: &str,
        _: crate::loopback::ObjectChange<'_>,
    ) -> ApiResult<()> {
        Ok(())
    }
    async fn edit_object_status(
        &self,
        _: Resource<'_>,
        _: Option<&str>,
        _: &str,
        _: crate::loopback::ObjectChange<'_>,
    ) -> ApiResult<()> {
        Ok(())
    }
    async fn edit_status(
        &self,
        _: Resource<'_>,
        _: Option<&str>,
        _: &str,
        _: Change<'_>,
    ) -> ApiResult<()> {
        Ok(())
    }
    async fn edit(
        &self,
        _: Resource<'_>,
        _: Option<&str>,
        _: &str,
        _: Change<'_>,
    ) -> ApiResult<()> {
        Ok(())
    }
}

/// `value` as the Rust value of `resource`'s kind.
fn typed((group, version, plural): Resource<'_>, value: Value) -> ApiResult<Object> {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let entry = scheme.get(group, version, plural).unwrap().clone();
    Ok(Input::from_value(&entry, value)?.object)
}

fn pods() -> KindEntry {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    scheme.get("", "v1", "pods").unwrap().clone()
}

/// Runs a create of a one-container pod by a user who is no node through
/// every phase of the built-in chain and the admission from outside (no
/// webhook or policy configured); answers the pod and how many JSON forms
/// the phases made.
async fn create_pod(objects: &Objects) -> (Pod, usize) {
    let entry = pods();
    let scope = Scope::new(&entry, Some("ns"));
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}
    }))
    .unwrap();
    let mut object = Object::new(Box::new(pod));
    let user = UserInfo::new("alice", &["system:authenticated"]);
    let mut metrics = prometheus_client::registry::Registry::default();
    let chain: Chain =
        super::builtin().with_plugins(super::dynamic(&mut metrics, Default::default()));
    let before = json_forms_made();
    let request = Request::new(
        Operation::Create,
        Endpoint::Main,
        scope,
        object.metadata(),
        &crate::options::WriteOptions {
            user: &user,
            ..Default::default()
        },
    );
    chain.judge(&request, objects).await.unwrap();
    chain
        .admit(&request, &mut object, None, objects)
        .await
        .unwrap();
    let mut warnings = Vec::new();
    chain
        .validate(&request, &object, None, objects, &mut warnings)
        .await
        .unwrap();
    let charge = chain.quota(objects, scope, &object, false).await.unwrap();
    assert!(charge.is_none());
    let made = json_forms_made() - before;
    (object.downcast_ref::<Pod>().unwrap().clone(), made)
}

#[tokio::test]
async fn a_pod_create_with_nothing_to_check_makes_no_json_form() {
    let (pod, made) = create_pod(&Objects::with(Vec::new())).await;
    assert_eq!(made, 0);
    // Every mutating plugin did its work on the typed pod.
    let spec = &pod.spec;
    assert_eq!(spec.service_account_name.as_deref(), Some("default"));
    let volumes = spec.volumes.as_deref().unwrap();
    assert!(volumes[0].name.starts_with("kube-api-access-"));
    let mounts = spec.containers[0].volume_mounts.as_deref().unwrap();
    assert_eq!(mounts[0].name, volumes[0].name);
    assert_eq!(spec.priority, Some(0));
    assert_eq!(
        spec.preemption_policy.as_deref(),
        Some("PreemptLowerPriority")
    );
    assert_eq!(spec.tolerations.as_ref().map(Vec::len), Some(2));
}

#[tokio::test]
async fn the_token_volume_is_the_one_kube_apiserver_writes() {
    let (pod, _) = create_pod(&Objects::with(Vec::new())).await;
    let volumes = serde_json::to_value(&pod.spec.volumes).unwrap();
    let name = volumes[0]["name"].clone();
    assert_eq!(
        volumes[0],
        json!({
            "name": name,
            "projected": {
                "sources": [
                    { "serviceAccountToken": { "expirationSeconds": 3607, "path": "token" } },
                    { "configMap": { "name": "kube-root-ca.crt", "items": [{ "key": "ca.crt", "path": "ca.crt" }] } },
                    { "downwardAPI": { "items": [{
                        "path": "namespace",
                        "fieldRef": { "apiVersion": "v1", "fieldPath": "metadata.namespace" }
                    }] } }
                ],
                "defaultMode": 420
            }
        })
    );
    let mounts = serde_json::to_value(&pod.spec.containers[0].volume_mounts).unwrap();
    assert_eq!(
        mounts,
        json!([{ "name": name, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount" }])
    );
}

#[tokio::test]
async fn limit_ranges_default_and_bound_the_typed_pod() {
    let range = json!({
        "metadata": {"name": "r", "namespace": "ns"},
        "spec": {"limits": [{"type": "Container", "default": {"cpu": "1"}}]}
    });
    let (pod, made) = create_pod(&Objects::with(vec![(("", "v1", "limitranges"), range)])).await;
    assert_eq!(made, 0);
    let limits = pod.spec.containers[0].resources.limits.as_ref().unwrap();
    assert_eq!(limits["cpu"].0, "1");
    let annotations = pod.metadata.annotations.unwrap();
    assert_eq!(
        annotations["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu limit for container c"
    );
}

#[tokio::test]
async fn quotas_check_the_typed_pod() {
    let quota = json!({
        "metadata": {"name": "q", "namespace": "ns"},
        "status": {"hard": {"count/configmaps": "1"}, "used": {"count/configmaps": "0"}}
    });
    let (_, made) = create_pod(&Objects::with(vec![(("", "v1", "resourcequotas"), quota)])).await;
    assert_eq!(made, 0);
}

#[tokio::test]
async fn pod_security_levels_check_the_typed_pod() {
    for level in ["baseline", "restricted"] {
        let mut objects = Objects::with(Vec::new());
        objects.0[0].1["metadata"]["labels"] = json!({"pod-security.kubernetes.io/warn": level});
        let (_, made) = create_pod(&objects).await;
        assert_eq!(made, 0, "{level}");
    }
}
