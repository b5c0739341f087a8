//! Which objects a node may reach, as upstream's node authorizer graph
//! relates them: a pod bound to the node, and what that pod uses (its
//! secrets, config maps, claims, service account, resource claims); the
//! volume bound to one of those claims and the secrets that volume names;
//! the volume attachments and resource slices that name the node.
//!
//! Upstream keeps a graph fed by informers. kapi asks its watch caches
//! instead: the pods cache indexes `spec.nodeName`, so the pods of one node
//! are one index lookup, and only those pods are read.

use std::sync::Arc;

use kapi_api_types::core::v1::pod::env::{EnvFromSource, EnvVar};
use kapi_api_types::core::v1::pod::projected::VolumeProjection;
use kapi_api_types::core::v1::pod::volume::Volume as PodVolume;
use kapi_api_types::core::v1::reference::LocalObjectReference;
use kapi_api_types::core::v1::secret_reference::SecretReference;
use kapi_api_types::core::v1::{PersistentVolume, Pod};
use kapi_api_types::storage::v1::VolumeAttachment;
use serde::Deserialize;

use crate::body::Object;
use crate::cache::{Cached, ObjectRef, ResourceCache};
use crate::registry::Registry;
use crate::stored::keys;

/// A kind of object a node may be related to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vertex {
    /// A pod.
    Pod,
    /// A secret.
    Secret,
    /// A config map.
    ConfigMap,
    /// A persistent volume claim.
    Claim,
    /// A persistent volume.
    Volume,
    /// A service account.
    ServiceAccount,
    /// A resource.k8s.io ResourceClaim.
    ResourceClaim,
    /// A storage.k8s.io VolumeAttachment.
    VolumeAttachment,
    /// A resource.k8s.io ResourceSlice.
    ResourceSlice,
}

/// The caches the relations are read from, looked up once.
#[derive(Default)]
pub struct Caches {
    caches: tokio::sync::OnceCell<Found>,
}

/// The caches of the kinds kapi serves (`None`: a kind it does not).
struct Found {
    pods: Option<Arc<ResourceCache>>,
    volumes: Option<Arc<ResourceCache>>,
    attachments: Option<Arc<ResourceCache>>,
    slices: Option<Arc<ResourceCache>>,
}

impl Caches {
    async fn get(&self, registry: &Registry) -> &Found {
        self.caches
            .get_or_init(|| async {
                Found {
                    pods: registry.listed_cache(("", "v1", "pods")).await,
                    volumes: registry.listed_cache(("", "v1", "persistentvolumes")).await,
                    attachments: registry
                        .listed_cache(("storage.k8s.io", "v1", "volumeattachments"))
                        .await,
                    slices: registry
                        .listed_cache(("resource.k8s.io", "v1beta1", "resourceslices"))
                        .await,
                }
            })
            .await
    }

    /// Whether `node` is related to the `vertex` object `namespace/name`.
    pub async fn related(
        &self,
        registry: &Registry,
        node: &str,
        vertex: Vertex,
        namespace: &str,
        name: &str,
    ) -> bool {
        let found = self.get(registry).await;
        match vertex {
            Vertex::Pod => read(found.pods.as_ref(), Some(namespace), name)
                .as_ref()
                .and_then(|object| object.downcast_ref::<Pod>())
                .is_some_and(|pod| node_name(pod) == node),
            Vertex::VolumeAttachment => read(found.attachments.as_ref(), None, name)
                .as_ref()
                .and_then(|object| object.downcast_ref::<VolumeAttachment>())
                .is_some_and(|attachment| attachment.spec.node_name == node),
            Vertex::ResourceSlice => {
                let slice = found.slices.as_ref().and_then(|cache| {
                    let key = keys::object(cache.entry().info, None, name);
                    let cached = cache.get(&key)??;
                    serde_json::from_slice::<NodeNamed>(cached.json().ok()?).ok()
                });
                slice.is_some_and(|slice| slice.spec.node_name == node)
            }
            Vertex::Volume => {
                let Some(object) = read(found.volumes.as_ref(), None, name) else {
                    return false;
                };
                let Some(claim) = object
                    .downcast_ref::<PersistentVolume>()
                    .and_then(|volume| volume.spec.claim_ref.as_ref())
                else {
                    return false;
                };
                let (claim_namespace, claim_name) = (
                    claim.namespace.as_deref().unwrap_or_default(),
                    claim.name.as_deref().unwrap_or_default(),
                );
                pods_on(found, node)
                    .iter()
                    .filter_map(|o| o.downcast_ref::<Pod>())
                    .any(|pod| namespace_of(pod) == claim_namespace && uses_claim(pod, claim_name))
            }
            Vertex::Secret => {
                let objects = pods_on(found, node);
                let pods: Vec<&Pod> = objects
                    .iter()
                    .filter_map(|o| o.downcast_ref::<Pod>())
                    .collect();
                if pods
                    .iter()
                    .filter(|pod| namespace_of(pod) == namespace)
                    .any(|pod| uses(pod, vertex, name))
                {
                    return true;
                }
                // A secret of a volume bound to a claim one of the pods uses.
                let claims: Vec<(&str, String)> = pods
                    .iter()
                    .flat_map(|pod| claims(pod).map(move |claim| (namespace_of(pod), claim)))
                    .collect();
                !claims.is_empty() && volume_secret_used(found, &claims, namespace, name)
            }
            Vertex::ConfigMap | Vertex::Claim | Vertex::ServiceAccount | Vertex::ResourceClaim => {
                pods_on(found, node)
                    .iter()
                    .filter_map(|o| o.downcast_ref::<Pod>())
                    .any(|pod| namespace_of(pod) == namespace && uses(pod, vertex, name))
            }
        }
    }
}

/// The object `namespace/name` of `cache`, decoded (shared with the
/// cache's other readers while held).
fn read(
    cache: Option<&Arc<ResourceCache>>,
    namespace: Option<&str>,
    name: &str,
) -> Option<Decoded> {
    let cache = cache?;
    let key = keys::object(cache.entry().info, namespace, name);
    let cached = cache.get(&key)??;
    decoded(&cached)
}

/// A cached object, decoded.
type Decoded = Arc<Object>;

fn decoded(cached: &Cached) -> Option<Decoded> {
    match cached.object().ok()? {
        ObjectRef::Decoded(object) => Some(object),
        ObjectRef::Kept(object) => Some(Arc::new(object.clone())),
    }
}

/// The pods bound to `node`, through the pods cache's `spec.nodeName`
/// index.
fn pods_on(found: &Found, node: &str) -> Vec<Decoded> {
    let Some(snapshot) = found.pods.as_ref().and_then(|cache| cache.snapshot()) else {
        return Vec::new();
    };
    let Some(keys) = snapshot.indexes.keys_of("spec.nodeName", node) else {
        return Vec::new();
    };
    keys.filter_map(|key| snapshot.objects.get(key))
        .filter_map(|cached| decoded(cached))
        .filter(|object| object.downcast_ref::<Pod>().is_some())
        .collect()
}

/// Whether a persistent volume bound to one of `claims` (namespace, name)
/// names the secret `namespace/name`.
fn volume_secret_used(
    found: &Found,
    claims: &[(&str, String)],
    namespace: &str,
    name: &str,
) -> bool {
    let Some(objects) = found.volumes.as_ref().and_then(|cache| cache.objects()) else {
        return false;
    };
    objects
        .values()
        .filter_map(|cached| decoded(cached))
        .any(|object| {
            let Some(volume) = object.downcast_ref::<PersistentVolume>() else {
                return false;
            };
            let bound = volume.spec.claim_ref.as_ref().is_some_and(|claim| {
                claims.iter().any(|(ns, claimed)| {
                    claim.namespace.as_deref() == Some(*ns)
                        && claim.name.as_deref() == Some(claimed)
                })
            });
            bound && volume_secrets(volume).any(|(ns, secret)| ns == namespace && secret == name)
        })
}

/// What a pod's spec names.
pub struct PodReferences<'p>(&'p Pod);

impl<'p> PodReferences<'p> {
    /// The references of `pod`.
    pub fn of(pod: &'p Pod) -> PodReferences<'p> {
        PodReferences(pod)
    }

    /// Whether the pod names a secret.
    pub fn has_secrets(&self) -> bool {
        secrets(self.0).next().is_some()
    }

    /// Whether the pod names a config map.
    pub fn has_config_maps(&self) -> bool {
        config_maps(self.0).next().is_some()
    }
}

fn namespace_of(pod: &Pod) -> &str {
    pod.metadata.namespace.as_deref().unwrap_or_default()
}

fn node_name(pod: &Pod) -> &str {
    pod.spec.node_name.as_deref().unwrap_or_default()
}

/// Every container's environment (init, regular, ephemeral): its `env` and
/// `envFrom`.
fn environments(pod: &Pod) -> impl Iterator<Item = (&[EnvVar], &[EnvFromSource])> {
    let spec = &pod.spec;
    let regular = spec
        .init_containers
        .iter()
        .flatten()
        .chain(&spec.containers)
        .map(|c| (c.env.as_deref(), c.env_from.as_deref()));
    let ephemeral = spec
        .ephemeral_containers
        .iter()
        .flatten()
        .map(|c| (c.env.as_deref(), c.env_from.as_deref()));
    regular
        .chain(ephemeral)
        .map(|(env, from)| (env.unwrap_or_default(), from.unwrap_or_default()))
}

fn volumes(pod: &Pod) -> impl Iterator<Item = &PodVolume> {
    pod.spec.volumes.iter().flatten()
}

/// The sources of a pod volume's projection.
fn projections(volume: &PodVolume) -> impl Iterator<Item = &VolumeProjection> {
    volume.projected.iter().flat_map(|p| &p.sources)
}

/// Whether the pod uses the `vertex` object `name` of its namespace.
fn uses(pod: &Pod, vertex: Vertex, name: &str) -> bool {
    match vertex {
        Vertex::Secret => secrets(pod).any(|secret| secret == name),
        Vertex::ConfigMap => config_maps(pod).any(|map| map == name),
        Vertex::Claim => uses_claim(pod, name),
        Vertex::ServiceAccount => pod.spec.service_account_name.as_deref() == Some(name),
        Vertex::ResourceClaim => {
            let named = pod
                .spec
                .resource_claims
                .iter()
                .flatten()
                .map(|c| &c.resource_claim_name);
            let statuses = pod
                .status
                .resource_claim_statuses
                .iter()
                .flatten()
                .map(|c| &c.resource_claim_name);
            named
                .chain(statuses)
                .any(|claim| claim.as_deref() == Some(name))
        }
        _ => false,
    }
}

/// The secrets the pod names (upstream's `VisitPodSecretNames`).
fn secrets(pod: &Pod) -> impl Iterator<Item = &str> {
    let pulls = pod
        .spec
        .image_pull_secrets
        .iter()
        .flatten()
        .filter_map(|s| s.name.as_deref());
    let env = environments(pod).flat_map(|(env, from)| {
        let values = env.iter().filter_map(|e| {
            e.value_from
                .as_ref()?
                .secret_key_ref
                .as_ref()?
                .name
                .as_deref()
        });
        let from = from
            .iter()
            .filter_map(|e| e.secret_ref.as_ref()?.name.as_deref());
        values.chain(from)
    });
    let volumes = volumes(pod).flat_map(|v| {
        let direct = [
            v.secret.as_ref().and_then(|s| s.secret_name.as_deref()),
            v.azure_file.as_ref().map(|a| a.secret_name.as_str()),
            v.csi
                .as_ref()
                .and_then(|c| local(&c.node_publish_secret_ref)),
            v.cephfs.as_ref().and_then(|c| local(&c.secret_ref)),
            v.cinder.as_ref().and_then(|c| local(&c.secret_ref)),
            v.flex_volume.as_ref().and_then(|c| local(&c.secret_ref)),
            v.rbd.as_ref().and_then(|c| local(&c.secret_ref)),
            v.iscsi.as_ref().and_then(|c| local(&c.secret_ref)),
            v.scale_io.as_ref().and_then(|c| local(&c.secret_ref)),
            v.storageos.as_ref().and_then(|c| local(&c.secret_ref)),
        ];
        let projected = projections(v).filter_map(|p| p.secret.as_ref()?.name.as_deref());
        direct.into_iter().flatten().chain(projected)
    });
    pulls.chain(env).chain(volumes)
}

/// The config maps the pod names (upstream's `VisitPodConfigmapNames`).
fn config_maps(pod: &Pod) -> impl Iterator<Item = &str> {
    let env = environments(pod).flat_map(|(env, from)| {
        let values = env.iter().filter_map(|e| {
            e.value_from
                .as_ref()?
                .config_map_key_ref
                .as_ref()?
                .name
                .as_deref()
        });
        let from = from
            .iter()
            .filter_map(|e| e.config_map_ref.as_ref()?.name.as_deref());
        values.chain(from)
    });
    let volumes = volumes(pod).flat_map(|v| {
        let direct = v.config_map.as_ref().and_then(|m| m.name.as_deref());
        let projected = projections(v).filter_map(|p| p.config_map.as_ref()?.name.as_deref());
        direct.into_iter().chain(projected)
    });
    env.chain(volumes)
}

/// The claims the pod's volumes use: named ones, and the claim an
/// ephemeral volume makes (`<pod>-<volume>`).
fn claims(pod: &Pod) -> impl Iterator<Item = String> + '_ {
    volumes(pod).filter_map(|volume| {
        if let Some(claim) = &volume.persistent_volume_claim {
            return Some(claim.claim_name.clone());
        }
        if volume.ephemeral.is_some() {
            let pod_name = pod.metadata.name.as_deref().unwrap_or_default();
            return Some(format!("{pod_name}-{}", volume.name));
        }
        None
    })
}

fn uses_claim(pod: &Pod, name: &str) -> bool {
    claims(pod).any(|claim| claim == name)
}

/// The secrets a persistent volume names, with their namespaces: a
/// reference's own, else its claim's (upstream's `VisitPVSecretNames`).
fn volume_secrets<'v>(volume: &'v PersistentVolume) -> impl Iterator<Item = (&'v str, &'v str)> {
    let spec = &volume.spec;
    let claim_namespace = spec
        .claim_ref
        .as_ref()
        .and_then(|claim| claim.namespace.as_deref())
        .unwrap_or_default();
    let in_namespace = |name, namespace| in_namespace(name, namespace, claim_namespace);
    let secret = |r: &'v Option<SecretReference>| {
        let r = r.as_ref()?;
        in_namespace(r.name.as_deref(), r.namespace.as_deref())
    };
    let csi = spec.csi.as_ref();
    let refs = [
        spec.cephfs.as_ref().and_then(|s| secret(&s.secret_ref)),
        spec.cinder.as_ref().and_then(|s| secret(&s.secret_ref)),
        spec.flex_volume
            .as_ref()
            .and_then(|s| secret(&s.secret_ref)),
        spec.rbd.as_ref().and_then(|s| secret(&s.secret_ref)),
        spec.iscsi.as_ref().and_then(|s| secret(&s.secret_ref)),
        spec.scale_io.as_ref().and_then(|s| secret(&s.secret_ref)),
        spec.storageos.as_ref().and_then(|s| {
            let r = s.secret_ref.as_ref()?;
            in_namespace(r.name.as_deref(), r.namespace.as_deref())
        }),
        csi.and_then(|c| secret(&c.controller_publish_secret_ref)),
        csi.and_then(|c| secret(&c.controller_expand_secret_ref)),
        csi.and_then(|c| secret(&c.node_publish_secret_ref)),
        csi.and_then(|c| secret(&c.node_stage_secret_ref)),
        csi.and_then(|c| secret(&c.node_expand_secret_ref)),
        spec.azure_file.as_ref().and_then(|a| {
            in_namespace(Some(a.secret_name.as_str()), a.secret_namespace.as_deref())
        }),
    ];
    refs.into_iter().flatten()
}

/// A reference's name with its namespace, else the claim's.
fn in_namespace<'v>(
    name: Option<&'v str>,
    namespace: Option<&'v str>,
    claim_namespace: &'v str,
) -> Option<(&'v str, &'v str)> {
    let namespace = namespace
        .filter(|ns| !ns.is_empty())
        .unwrap_or(claim_namespace);
    Some((namespace, name?))
}

/// The name a pod volume's secret reference gives.
fn local(reference: &Option<LocalObjectReference>) -> Option<&str> {
    reference.as_ref()?.name.as_deref()
}

/// A ResourceSlice's node (`spec.nodeName`): resource.k8s.io is no
/// compiled kind, so its JSON is read for this one field.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct NodeNamed {
    spec: NodeNamedSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct NodeNamedSpec {
    node_name: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn pod(value: Value) -> Pod {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_pod_uses_what_its_spec_names() {
        let pod = pod(json!({
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {
                "nodeName": "n1",
                "serviceAccountName": "runner",
                "imagePullSecrets": [{"name": "pull"}],
                "containers": [{"name": "c", "env": [
                    {"name": "A", "valueFrom": {"secretKeyRef": {"name": "env-secret", "key": "k"}}},
                    {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "env-map", "key": "k"}}}],
                    "envFrom": [{"secretRef": {"name": "from-secret"}}, {"configMapRef": {"name": "from-map"}}]}],
                "initContainers": [{"name": "i", "envFrom": [{"secretRef": {"name": "init-secret"}}]}],
                "volumes": [
                    {"name": "s", "secret": {"secretName": "vol-secret"}},
                    {"name": "m", "configMap": {"name": "vol-map"}},
                    {"name": "p", "projected": {"sources": [
                        {"secret": {"name": "proj-secret"}}, {"configMap": {"name": "proj-map"}},
                        {"serviceAccountToken": {"path": "t"}}]}},
                    {"name": "r", "rbd": {"monitors": [], "image": "i", "secretRef": {"name": "rbd-secret"}}},
                    {"name": "c", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "csi-secret"}}},
                    {"name": "data", "persistentVolumeClaim": {"claimName": "data-claim"}},
                    {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}]
            },
            "status": {"resourceClaimStatuses": [{"name": "t", "resourceClaimName": "web-t-x"}]}
        }));
        for secret in [
            "pull",
            "env-secret",
            "from-secret",
            "init-secret",
            "vol-secret",
            "proj-secret",
            "rbd-secret",
            "csi-secret",
        ] {
            assert!(uses(&pod, Vertex::Secret, secret), "{secret}");
        }
        assert!(!uses(&pod, Vertex::Secret, "env-map"));
        for map in ["env-map", "from-map", "vol-map", "proj-map"] {
            assert!(uses(&pod, Vertex::ConfigMap, map), "{map}");
        }
        assert!(uses(&pod, Vertex::Claim, "data-claim"));
        assert!(uses(&pod, Vertex::Claim, "web-scratch"));
        assert!(!uses(&pod, Vertex::Claim, "scratch"));
        assert!(uses(&pod, Vertex::ServiceAccount, "runner"));
        assert!(uses(&pod, Vertex::ResourceClaim, "gpu-claim"));
        assert!(uses(&pod, Vertex::ResourceClaim, "web-t-x"));
        assert!(!uses(&pod, Vertex::ResourceClaim, "other"));
    }

    #[test]
    fn a_volume_names_secrets_in_their_namespace_or_its_claims() {
        let volume: PersistentVolume = serde_json::from_value(json!({"spec": {
            "claimRef": {"namespace": "apps", "name": "data"},
            "csi": {"driver": "d", "volumeHandle": "h", "nodeStageSecretRef": {"name": "stage", "namespace": "storage"},
                "nodePublishSecretRef": {"name": "publish"}},
            "azureFile": {"secretName": "azure", "shareName": "s"}
        }}))
        .unwrap();
        let mut secrets: Vec<(&str, &str)> = volume_secrets(&volume).collect();
        secrets.sort();
        assert_eq!(
            secrets,
            [("apps", "azure"), ("apps", "publish"), ("storage", "stage")]
        );
    }
}
