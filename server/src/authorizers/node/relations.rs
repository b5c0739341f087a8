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

use serde::Deserialize;
use serde_json::Value;

use crate::cache::{Cached, ResourceCache};
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
            Vertex::Pod => {
                let pod = read::<Pod>(found.pods.as_ref(), Some(namespace), name);
                pod.is_some_and(|pod| pod.spec.node_name == node)
            }
            Vertex::VolumeAttachment | Vertex::ResourceSlice => {
                let cache = match vertex {
                    Vertex::VolumeAttachment => found.attachments.as_ref(),
                    _ => found.slices.as_ref(),
                };
                let object = read::<NodeNamed>(cache, None, name);
                object.is_some_and(|object| object.spec.node_name == node)
            }
            Vertex::Volume => {
                let Some(volume) = read::<Volume>(found.volumes.as_ref(), None, name) else {
                    return false;
                };
                let Some(claim) = volume.spec.claim_ref else {
                    return false;
                };
                pods_on(found, node)
                    .iter()
                    .any(|pod| pod.namespace() == claim.namespace && pod.uses_claim(&claim.name))
            }
            Vertex::Secret => {
                let pods = pods_on(found, node);
                let in_namespace = |pod: &&Pod| pod.namespace() == namespace;
                if pods
                    .iter()
                    .filter(in_namespace)
                    .any(|pod| pod.uses(vertex, name))
                {
                    return true;
                }
                // A secret of a volume bound to a claim one of the pods uses.
                let claims: Vec<(&str, String)> = pods
                    .iter()
                    .flat_map(|pod| pod.claims().map(move |claim| (pod.namespace(), claim)))
                    .collect();
                !claims.is_empty() && volume_secret_used(found, &claims, namespace, name)
            }
            Vertex::ConfigMap | Vertex::Claim | Vertex::ServiceAccount | Vertex::ResourceClaim => {
                pods_on(found, node)
                    .iter()
                    .any(|pod| pod.namespace() == namespace && pod.uses(vertex, name))
            }
        }
    }
}

/// The object `namespace/name` of `cache`, read as `T`.
fn read<T: for<'de> Deserialize<'de>>(
    cache: Option<&Arc<ResourceCache>>,
    namespace: Option<&str>,
    name: &str,
) -> Option<T> {
    let cache = cache?;
    let key = keys::object(cache.entry().info, namespace, name);
    let cached = cache.get(&key)??;
    parse(&cached)
}

fn parse<T: for<'de> Deserialize<'de>>(cached: &Cached) -> Option<T> {
    serde_json::from_slice(cached.json().ok()?).ok()
}

/// The pods bound to `node`, through the pods cache's `spec.nodeName`
/// index.
fn pods_on(found: &Found, node: &str) -> Vec<Pod> {
    let Some(snapshot) = found.pods.as_ref().and_then(|cache| cache.snapshot()) else {
        return Vec::new();
    };
    let Some(keys) = snapshot.indexes.keys_of("spec.nodeName", node) else {
        return Vec::new();
    };
    keys.filter_map(|key| snapshot.objects.get(key))
        .filter_map(|cached| parse::<Pod>(cached))
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
        .filter_map(|cached| parse::<Volume>(cached))
        .filter(|volume| {
            volume.spec.claim_ref.as_ref().is_some_and(|claim| {
                claims
                    .iter()
                    .any(|(ns, claimed)| *ns == claim.namespace && *claimed == claim.name)
            })
        })
        .any(|volume| {
            volume
                .secrets()
                .any(|(ns, secret)| ns == namespace && secret == name)
        })
}

/// What a pod's spec names, read from its JSON.
pub struct PodReferences(Pod);

impl PodReferences {
    /// The references of `pod`.
    pub fn of(pod: &Value) -> PodReferences {
        PodReferences(Pod::deserialize(pod).unwrap_or_default())
    }

    /// Whether the pod names a secret.
    pub fn has_secrets(&self) -> bool {
        self.0.secrets().next().is_some()
    }

    /// Whether the pod names a config map.
    pub fn has_config_maps(&self) -> bool {
        self.0.config_maps().next().is_some()
    }
}

/// What a pod references, as its JSON reads.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Pod {
    metadata: Meta,
    spec: PodSpec,
    status: PodStatus,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Meta {
    name: String,
    namespace: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct PodSpec {
    node_name: String,
    service_account_name: String,
    image_pull_secrets: Vec<Named>,
    containers: Vec<Container>,
    init_containers: Vec<Container>,
    ephemeral_containers: Vec<Container>,
    volumes: Vec<Value>,
    resource_claims: Vec<PodClaim>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct PodStatus {
    resource_claim_statuses: Vec<PodClaim>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct PodClaim {
    resource_claim_name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Container {
    env: Vec<Env>,
    env_from: Vec<EnvFrom>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Env {
    value_from: Option<EnvSource>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct EnvSource {
    secret_key_ref: Option<Named>,
    config_map_key_ref: Option<Named>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct EnvFrom {
    secret_ref: Option<Named>,
    config_map_ref: Option<Named>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Named {
    name: String,
}

/// The volume sources that name a secret through a `secretRef`.
const SECRET_REF_SOURCES: [&str; 7] = [
    "cephfs",
    "cinder",
    "flexVolume",
    "rbd",
    "iscsi",
    "scaleIO",
    "storageos",
];

impl Pod {
    fn namespace(&self) -> &str {
        &self.metadata.namespace
    }

    fn containers(&self) -> impl Iterator<Item = &Container> {
        let spec = &self.spec;
        spec.containers
            .iter()
            .chain(&spec.init_containers)
            .chain(&spec.ephemeral_containers)
    }

    /// Whether the pod uses the `vertex` object `name` of its namespace.
    fn uses(&self, vertex: Vertex, name: &str) -> bool {
        match vertex {
            Vertex::Secret => self.secrets().any(|secret| secret == name),
            Vertex::ConfigMap => self.config_maps().any(|map| map == name),
            Vertex::Claim => self.uses_claim(name),
            Vertex::ServiceAccount => self.spec.service_account_name == name,
            Vertex::ResourceClaim => self
                .spec
                .resource_claims
                .iter()
                .chain(&self.status.resource_claim_statuses)
                .any(|claim| claim.resource_claim_name.as_deref() == Some(name)),
            _ => false,
        }
    }

    /// The secrets the pod names (upstream's `VisitPodSecretNames`).
    fn secrets(&self) -> impl Iterator<Item = &str> {
        let pulls = self.spec.image_pull_secrets.iter().map(|s| s.name.as_str());
        let env = self.containers().flat_map(|c| {
            let values = c.env.iter().filter_map(|e| {
                let named = e.value_from.as_ref()?.secret_key_ref.as_ref()?;
                Some(named.name.as_str())
            });
            let from = c
                .env_from
                .iter()
                .filter_map(|e| Some(e.secret_ref.as_ref()?.name.as_str()));
            values.chain(from)
        });
        let volumes = self.spec.volumes.iter().flat_map(|volume| {
            let direct = [
                &volume["secret"]["secretName"],
                &volume["azureFile"]["secretName"],
                &volume["csi"]["nodePublishSecretRef"]["name"],
            ];
            let refs = SECRET_REF_SOURCES
                .iter()
                .map(move |source| &volume[*source]["secretRef"]["name"]);
            let projected = projected(volume, "secret");
            direct
                .into_iter()
                .chain(refs)
                .chain(projected)
                .filter_map(Value::as_str)
        });
        pulls.chain(env).chain(volumes)
    }

    /// The config maps the pod names (upstream's `VisitPodConfigmapNames`).
    fn config_maps(&self) -> impl Iterator<Item = &str> {
        let env = self.containers().flat_map(|c| {
            let values = c.env.iter().filter_map(|e| {
                let named = e.value_from.as_ref()?.config_map_key_ref.as_ref()?;
                Some(named.name.as_str())
            });
            let from = c
                .env_from
                .iter()
                .filter_map(|e| Some(e.config_map_ref.as_ref()?.name.as_str()));
            values.chain(from)
        });
        let volumes = self.spec.volumes.iter().flat_map(|volume| {
            std::iter::once(&volume["configMap"]["name"])
                .chain(projected(volume, "configMap"))
                .filter_map(Value::as_str)
        });
        env.chain(volumes)
    }

    /// The claims the pod's volumes use: named ones, and the claim an
    /// ephemeral volume makes (`<pod>-<volume>`).
    fn claims(&self) -> impl Iterator<Item = String> + '_ {
        self.spec.volumes.iter().filter_map(|volume| {
            if let Some(claim) = volume["persistentVolumeClaim"]["claimName"].as_str() {
                return Some(claim.to_owned());
            }
            if volume["ephemeral"].is_object() {
                let name = volume["name"].as_str()?;
                return Some(format!("{}-{name}", self.metadata.name));
            }
            None
        })
    }

    fn uses_claim(&self, name: &str) -> bool {
        self.claims().any(|claim| claim == name)
    }
}

/// The `kind` names of a projected volume's sources.
fn projected<'v>(volume: &'v Value, kind: &'v str) -> impl Iterator<Item = &'v Value> + 'v {
    volume["projected"]["sources"]
        .as_array()
        .into_iter()
        .flatten()
        .map(move |source| &source[kind]["name"])
}

/// A persistent volume's claim and the secrets it names.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Volume {
    spec: VolumeSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct VolumeSpec {
    claim_ref: Option<ClaimRef>,
    #[serde(flatten)]
    sources: serde_json::Map<String, Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaimRef {
    name: String,
    namespace: String,
}

/// The secret references of a persistent volume's sources that carry their
/// namespace (upstream's `VisitPVSecretNames`).
const VOLUME_SECRET_REFS: [(&str, &str); 12] = [
    ("cephfs", "secretRef"),
    ("cinder", "secretRef"),
    ("flexVolume", "secretRef"),
    ("rbd", "secretRef"),
    ("iscsi", "secretRef"),
    ("scaleIO", "secretRef"),
    ("storageos", "secretRef"),
    ("csi", "controllerPublishSecretRef"),
    ("csi", "controllerExpandSecretRef"),
    ("csi", "nodePublishSecretRef"),
    ("csi", "nodeStageSecretRef"),
    ("csi", "nodeExpandSecretRef"),
];

impl Volume {
    /// The secrets the volume names, with their namespaces: a reference's
    /// own, else its claim's.
    fn secrets(&self) -> impl Iterator<Item = (&str, &str)> {
        let claim_namespace = self
            .spec
            .claim_ref
            .as_ref()
            .map_or("", |claim| claim.namespace.as_str());
        let sources = &self.spec.sources;
        let refs = VOLUME_SECRET_REFS
            .iter()
            .filter_map(move |(source, field)| {
                let reference = sources.get(*source)?.get(*field)?;
                let name = reference["name"].as_str()?;
                let namespace = reference["namespace"]
                    .as_str()
                    .filter(|ns| !ns.is_empty())
                    .unwrap_or(claim_namespace);
                Some((namespace, name))
            });
        let azure = sources.get("azureFile").and_then(|azure| {
            let name = azure["secretName"].as_str()?;
            let namespace = azure["secretNamespace"]
                .as_str()
                .filter(|ns| !ns.is_empty())
                .unwrap_or(claim_namespace);
            Some((namespace, name))
        });
        refs.chain(azure)
    }
}

/// An object that names a node in `spec.nodeName` (VolumeAttachment,
/// ResourceSlice).
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
    use serde_json::json;

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
            assert!(pod.uses(Vertex::Secret, secret), "{secret}");
        }
        assert!(!pod.uses(Vertex::Secret, "env-map"));
        for map in ["env-map", "from-map", "vol-map", "proj-map"] {
            assert!(pod.uses(Vertex::ConfigMap, map), "{map}");
        }
        assert!(pod.uses(Vertex::Claim, "data-claim"));
        assert!(pod.uses(Vertex::Claim, "web-scratch"));
        assert!(!pod.uses(Vertex::Claim, "scratch"));
        assert!(pod.uses(Vertex::ServiceAccount, "runner"));
        assert!(pod.uses(Vertex::ResourceClaim, "gpu-claim"));
        assert!(pod.uses(Vertex::ResourceClaim, "web-t-x"));
        assert!(!pod.uses(Vertex::ResourceClaim, "other"));
    }

    #[test]
    fn a_volume_names_secrets_in_their_namespace_or_its_claims() {
        let volume: Volume = serde_json::from_value(json!({"spec": {
            "claimRef": {"namespace": "apps", "name": "data"},
            "csi": {"driver": "d", "nodeStageSecretRef": {"name": "stage", "namespace": "storage"},
                "nodePublishSecretRef": {"name": "publish"}},
            "azureFile": {"secretName": "azure", "shareName": "s"}
        }}))
        .unwrap();
        let mut secrets: Vec<(&str, &str)> = volume.secrets().collect();
        secrets.sort();
        assert_eq!(
            secrets,
            [("apps", "azure"), ("apps", "publish"), ("storage", "stage")]
        );
    }
}
