//! NodeRestriction (plugin/pkg/admission/noderestriction): what the Node
//! authorizer lets every kubelet write, each may write only for itself —
//! its own Node (without new taints, node-restriction labels or unknown
//! kubernetes.io labels), mirror pods bound to it, the status and evictions
//! of its pods, the status of claims, its Lease and CSINode, and tokens
//! bound to its pods. Anyone who is not a node passes untouched.
//!
//! kube-apiserver leaves the plugin off unless asked; kapi turns it on, as
//! kubeadm does, since the Node authorizer is on by default. The objects are
//! read typed, as upstream's plugin asserts `*api.Pod` and `*api.Node`.

use std::collections::{BTreeMap, BTreeSet};

use kapi_api_types::authentication::v1::TokenRequest;
use kapi_api_types::coordination::v1::Lease;
use kapi_api_types::core::v1::{Node, PersistentVolumeClaim, Pod};
use kapi_api_types::storage::v1::CSINode;
use kapi_runtime::meta::ObjectMeta;

use crate::admission::{Attributes, Operation, Plugin, Request, Subject, View};
use crate::api_error::{ApiError, ApiResult, Target};
use crate::body::Object;
use crate::loopback::{self, Loopback};
use crate::scope::Endpoint;
use async_trait::async_trait;

/// The operation as upstream's errors print it.
fn operation(request: &Request<'_>) -> &'static str {
    match request.operation {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
    }
}

/// The subresource written (`""` for the object itself).
fn subresource(request: &Request<'_>) -> &'static str {
    match request.endpoint {
        Endpoint::Main => "",
        Endpoint::Status => "status",
        Endpoint::Part(part) => part.name,
    }
}

/// Whether the plugin looks at `request` (a node's write of a restricted
/// kind).
pub fn applies(request: &Request<'_>) -> bool {
    let Some(node) = request.user.node_name() else {
        return false;
    };
    node.is_empty()
        || request.is_kind::<Pod>()
        || request.is_kind::<Node>()
        || request.is_kind::<PersistentVolumeClaim>()
        || request.is_kind::<Lease>()
        || request.is_kind::<CSINode>()
}

/// A delete: the node's own pods, Lease and CSINode only (judged on the
/// name; a pod is read to see where it runs).
pub async fn judge(request: &Request<'_>, objects: &dyn Loopback) -> ApiResult<()> {
    let node = node_of(request)?;
    let attrs = &request.attrs;
    if request.is_kind::<Pod>() {
        let pod = existing_pod(objects, attrs, &attrs.name).await?;
        if node_name(&pod) != node {
            return Err(attrs.forbidden(&format!(
                "node {node:?} can only delete pods with spec.nodeName set to itself"
            )));
        }
        return Ok(());
    }
    check(request, node, None, None)
}

/// A create or update of `object` (`old` the stored object on an update).
pub async fn admit(
    request: &Request<'_>,
    object: &Object,
    old: Option<&Object>,
    objects: &dyn Loopback,
) -> ApiResult<()> {
    let node = node_of(request)?;
    if let Some(pod) = object.downcast_ref::<Pod>()
        && request.operation == Operation::Create
        && subresource(request).is_empty()
    {
        return admit_mirror_pod(&request.attrs, node, pod, objects).await;
    }
    check(request, node, Some(object), old)
}

/// The node the request comes from; a user naming none is refused.
fn node_of<'r>(request: &Request<'r>) -> ApiResult<&'r str> {
    match request.user.node_name() {
        Some("") | None => Err(request.attrs.forbidden(&format!(
            "could not determine node from user {:?}",
            request.user.name
        ))),
        Some(node) => Ok(node),
    }
}

/// The checks that need no other object than the old one.
fn check(
    request: &Request<'_>,
    node: &str,
    object: Option<&Object>,
    old: Option<&Object>,
) -> ApiResult<()> {
    let attrs = &request.attrs;
    let refuse = |why: String| Err(attrs.forbidden(&why));
    let sub = subresource(request);
    if request.is_kind::<Pod>() {
        return match (sub, request.operation) {
            ("", _) => refuse(format!(
                "unexpected operation {:?}, node {node:?} can only create and delete mirror pods",
                operation(request)
            )),
            ("status", Operation::Update) => {
                let (Some(new), Some(old)) = (typed::<Pod>(object), typed::<Pod>(old)) else {
                    return Ok(());
                };
                if node_name(old) != node {
                    return refuse(format!(
                        "node {node:?} can only update pod status for pods with spec.nodeName set to itself"
                    ));
                }
                if labels(&old.metadata) != labels(&new.metadata) {
                    return refuse(format!(
                        "node {node:?} cannot update labels through pod status"
                    ));
                }
                if claim_statuses(old) != claim_statuses(new) {
                    return refuse(format!(
                        "node {node:?} cannot update resource claim statues"
                    ));
                }
                Ok(())
            }
            ("status", _) => refuse(format!("unexpected operation {:?}", operation(request))),
            (other, _) => refuse(format!(
                "unexpected pod subresource {other:?}, only 'status' and 'eviction' are allowed"
            )),
        };
    }
    if request.is_kind::<Node>() {
        if attrs.name != node {
            return refuse(format!(
                "node {node:?} is not allowed to modify node {:?}",
                attrs.name
            ));
        }
        let Some(new) = object.and_then(|o| o.downcast_ref::<Node>()) else {
            return Ok(());
        };
        match old.and_then(|o| o.downcast_ref::<Node>()) {
            None => {
                if new.spec.config_source.is_some() {
                    return refuse(format!(
                        "node {node:?} is not allowed to create pods with a non-nil configSource"
                    ));
                }
                let forbidden = forbidden_labels(&labels(&new.metadata), &BTreeMap::new());
                if !forbidden.is_empty() {
                    return refuse(format!(
                        "node {node:?} is not allowed to set the following labels: {}",
                        forbidden.join(", ")
                    ));
                }
            }
            Some(old) => {
                let source = &new.spec.config_source;
                if source.is_some() && *source != old.spec.config_source {
                    return refuse(format!(
                        "node {node:?} is not allowed to update configSource to a new non-nil configSource"
                    ));
                }
                // An empty list of taints is the same as none.
                let taints = |n: &Node| n.spec.taints.clone().unwrap_or_default();
                if taints(new) != taints(old) {
                    return refuse(format!("node {node:?} is not allowed to modify taints"));
                }
                let forbidden = forbidden_labels(&labels(&new.metadata), &labels(&old.metadata));
                if !forbidden.is_empty() {
                    return refuse(format!(
                        "is not allowed to modify labels: {}",
                        forbidden.join(", ")
                    ));
                }
            }
        }
        return Ok(());
    }
    if request.is_kind::<PersistentVolumeClaim>() {
        let claim = typed::<PersistentVolumeClaim>;
        return match (sub, request.operation, claim(object), claim(old)) {
            ("status", Operation::Update, Some(new), Some(old)) => {
                if beyond_claim_status(old) != beyond_claim_status(new) {
                    return refuse(format!(
                        "node {node:?} is not allowed to update fields other than status.capacity and status.conditions"
                    ));
                }
                Ok(())
            }
            ("status", ..) => refuse(format!("unexpected operation {:?}", operation(request))),
            _ => refuse("may only update PVC status".to_owned()),
        };
    }
    if request.is_kind::<Lease>() {
        if attrs.namespace.as_deref() != Some(crate::authorizers::node::NODE_LEASE_NAMESPACE) {
            return refuse(format!(
                "can only access leases in the {:?} system namespace",
                crate::authorizers::node::NODE_LEASE_NAMESPACE
            ));
        }
        if attrs.name != node {
            return refuse(
                "can only access node lease with the same name as the requesting node".to_owned(),
            );
        }
        return Ok(());
    }
    if request.is_kind::<CSINode>() && attrs.name != node {
        return refuse(
            "can only access CSINode with the same name as the requesting node".to_owned(),
        );
    }
    Ok(())
}

/// A node may create only a mirror pod of its own: bound to it, owned by
/// its Node (as the controller, without blocking the owner's deletion),
/// and using no service account, secret, config map, trust bundle or
/// claim.
async fn admit_mirror_pod(
    attrs: &Attributes<'_>,
    node: &str,
    pod: &Pod,
    objects: &dyn Loopback,
) -> ApiResult<()> {
    let refuse = |why: String| Err(attrs.forbidden(&why));
    const MIRROR: &str = "kubernetes.io/config.mirror";
    let annotated = pod
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(MIRROR));
    if !annotated {
        return refuse(format!(
            "pod does not have {MIRROR:?} annotation, node {node:?} can only create mirror pods"
        ));
    }
    if node_name(pod) != node {
        return refuse(format!(
            "node {node:?} can only create pods with spec.nodeName set to itself"
        ));
    }
    let owner = match pod.metadata.owner_references.as_deref().unwrap_or_default() {
        [] => {
            return refuse(format!(
                "node {node:?} can only create pods with an owner reference set to itself"
            ));
        }
        [owner] => owner,
        _ => {
            return refuse(format!(
                "node {node:?} can only create pods with a single owner reference set to itself"
            ));
        }
    };
    if owner.api_version != "v1" || owner.kind != "Node" || owner.name != node {
        return refuse(format!(
            "node {node:?} can only create pods with an owner reference set to itself"
        ));
    }
    if owner.controller != Some(true) {
        return refuse(format!(
            "node {node:?} can only create pods with a controller owner reference set to itself"
        ));
    }
    if owner.block_owner_deletion == Some(true) {
        return refuse(format!(
            "node {node:?} must not set blockOwnerDeletion on an owner reference"
        ));
    }
    let Some(node_object) = loopback::get::<Node>(objects, None, node).await? else {
        return Err(ApiError::not_found(Target {
            group: "",
            resource: "node",
            name: node,
        }));
    };
    let got = node_object.metadata.uid.as_deref().unwrap_or_default();
    if owner.uid != got {
        return refuse(format!(
            "node {node} UID mismatch: expected {} got {got}",
            owner.uid
        ));
    }
    if !pod
        .spec
        .service_account_name
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        return refuse(format!(
            "node {node:?} can not create pods that reference a service account"
        ));
    }
    let relations = crate::authorizers::node::PodReferences::of(pod);
    if relations.has_secrets() {
        return refuse(format!(
            "node {node:?} can not create pods that reference secrets"
        ));
    }
    if relations.has_config_maps() {
        return refuse(format!(
            "node {node:?} can not create pods that reference configmaps"
        ));
    }
    let volumes = pod.spec.volumes.as_deref().unwrap_or_default();
    let bundles = volumes.iter().any(|volume| {
        volume.projected.as_ref().is_some_and(|projected| {
            projected
                .sources
                .iter()
                .any(|s| s.cluster_trust_bundle.is_some())
        })
    });
    if bundles {
        return refuse(format!(
            "node {node:?} can not create pods that reference clustertrustbundles"
        ));
    }
    if volumes
        .iter()
        .any(|volume| volume.persistent_volume_claim.is_some())
    {
        return refuse(format!(
            "node {node:?} can not create pods that reference persistentvolumeclaims"
        ));
    }
    Ok(())
}

/// The pod `name` of the request's namespace: a missing one is a 404.
async fn existing_pod(
    objects: &dyn Loopback,
    attrs: &Attributes<'_>,
    name: &str,
) -> ApiResult<Pod> {
    let namespace = attrs.namespace.as_deref();
    match loopback::get::<Pod>(objects, namespace, name).await? {
        Some(pod) => Ok(pod),
        // Read through a lister upstream, whose 404 names the kind in the
        // singular.
        None => Err(ApiError::not_found(Target {
            group: "",
            resource: "pod",
            name,
        })),
    }
}

/// A node's refusal of an eviction: only of a pod bound to the node
/// (`admitPodEviction`). `pods` names the pod's namespace.
pub async fn admit_eviction(
    attrs: &Attributes<'_>,
    node: &str,
    pod: &str,
    objects: &dyn Loopback,
) -> ApiResult<()> {
    let pod = existing_pod(objects, attrs, pod).await?;
    if node_name(&pod) != node {
        return Err(attrs.forbidden(&format!(
            "node {node} can only evict pods with spec.nodeName set to itself"
        )));
    }
    Ok(())
}

/// A node's refusal of a service account token: one bound to a pod of the
/// node only (`admitServiceAccount`).
pub async fn admit_token(
    attrs: &Attributes<'_>,
    node: &str,
    request: &TokenRequest,
    objects: &dyn Loopback,
) -> ApiResult<()> {
    let default = Default::default();
    let reference = request.spec.bound_object_ref.as_ref().unwrap_or(&default);
    let text = |field: &Option<String>| field.as_deref().unwrap_or_default().to_owned();
    let name = text(&reference.name);
    let name = name.as_str();
    if text(&reference.api_version) != "v1" || text(&reference.kind) != "Pod" || name.is_empty() {
        return Err(attrs.forbidden("node requested token not bound to a pod"));
    }
    let uid = text(&reference.uid);
    let uid = uid.as_str();
    if uid.is_empty() {
        return Err(attrs.forbidden("node requested token with a pod binding without a uid"));
    }
    let pod = existing_pod(objects, attrs, name).await?;
    if pod.metadata.uid.as_deref() != Some(uid) {
        return Err(attrs.forbidden(&format!(
            "the UID in the bound object reference ({uid}) does not match the UID in record. The object might have been deleted and then recreated"
        )));
    }
    if node_name(&pod) != node {
        return Err(
            attrs.forbidden("node requested token bound to a pod scheduled on a different node")
        );
    }
    Ok(())
}

/// `object` as the kind `K`, if it is one.
fn typed<K: kapi_runtime::Resource>(object: Option<&Object>) -> Option<&K> {
    object?.downcast_ref::<K>()
}

fn node_name(pod: &Pod) -> &str {
    pod.spec.node_name.as_deref().unwrap_or_default()
}

fn labels(meta: &ObjectMeta) -> BTreeMap<&str, &str> {
    meta.labels
        .iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// A pod's resource claim statuses: name and claim name, in order.
fn claim_statuses(pod: &Pod) -> Vec<(&str, Option<&str>)> {
    pod.status
        .resource_claim_statuses
        .iter()
        .flatten()
        .map(|status| (status.name.as_str(), status.resource_claim_name.as_deref()))
        .collect()
}

/// A claim without what a node may change in it: its resource version,
/// managed fields, and the status' capacity, conditions and allocated
/// resources (and their statuses).
fn beyond_claim_status(claim: &PersistentVolumeClaim) -> PersistentVolumeClaim {
    let mut claim = claim.clone();
    claim.metadata.resource_version = None;
    claim.metadata.managed_fields = None;
    let status = &mut claim.status;
    status.capacity = None;
    status.conditions = None;
    status.allocated_resources = None;
    status.allocated_resource_statuses = None;
    claim
}

/// The labels a node may not add, change or remove (sorted): those of
/// `node-restriction.kubernetes.io`, and kubernetes.io or k8s.io labels
/// other than the kubelet's own.
fn forbidden_labels(new: &BTreeMap<&str, &str>, old: &BTreeMap<&str, &str>) -> Vec<String> {
    let changed: BTreeSet<&str> = new
        .iter()
        .filter(|(k, v)| old.get(*k) != Some(*v))
        .chain(old.iter().filter(|(k, v)| new.get(*k) != Some(*v)))
        .map(|(k, _)| *k)
        .collect();
    changed
        .into_iter()
        .filter(|label| {
            let namespace = label.split_once('/').map_or("", |(ns, _)| ns);
            let in_domain =
                |domain: &str| namespace == domain || namespace.ends_with(&format!(".{domain}"));
            let restricted = in_domain("node-restriction.kubernetes.io");
            let kubernetes = in_domain("kubernetes.io") || in_domain("k8s.io");
            restricted || (kubernetes && !kubelet_label(label, in_domain))
        })
        .map(str::to_owned)
        .collect()
}

/// The labels a kubelet sets on its Node (upstream's `IsKubeletLabel`).
fn kubelet_label(label: &str, in_domain: impl Fn(&str) -> bool) -> bool {
    const KUBELET_LABELS: [&str; 11] = [
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "beta.kubernetes.io/instance-type",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/os",
        "kubernetes.io/arch",
        "beta.kubernetes.io/os",
        "beta.kubernetes.io/arch",
    ];
    KUBELET_LABELS.contains(&label)
        || in_domain("kubelet.kubernetes.io")
        || in_domain("node.kubernetes.io")
}

/// NodeRestriction: a kubelet writes only for its own node.
pub struct NodeRestriction;

#[async_trait]
impl Plugin for NodeRestriction {
    fn name(&self) -> &'static str {
        "NodeRestriction"
    }

    fn judges(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Delete && applies(request)
    }

    async fn judge(&self, request: &Request<'_>, objects: &dyn Loopback) -> ApiResult<()> {
        judge(request, objects).await
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.operation != Operation::Delete && applies(request)
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object: &Object = object.object()?;
        admit(request, object, old.map(View::object), objects).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map<'a>(pairs: &[(&'a str, &'a str)]) -> BTreeMap<&'a str, &'a str> {
        pairs.iter().copied().collect()
    }

    #[test]
    fn a_node_may_set_only_the_kubelets_labels() {
        let new = map(&[
            ("kubernetes.io/hostname", "n1"),
            (
                "node.kubernetes.io/exclude-from-external-load-balancers",
                "",
            ),
            ("node-restriction.kubernetes.io/pool", "a"),
            ("example.node-restriction.kubernetes.io/x", "a"),
            ("node-role.kubernetes.io/control-plane", ""),
            ("team.example.com/owner", "me"),
            ("k8s.io/custom", "1"),
        ]);
        assert_eq!(
            forbidden_labels(&new, &BTreeMap::new()),
            [
                "example.node-restriction.kubernetes.io/x",
                "k8s.io/custom",
                "node-restriction.kubernetes.io/pool",
                "node-role.kubernetes.io/control-plane",
            ]
        );
        // Unchanged labels are not the node's doing.
        assert!(forbidden_labels(&new, &new).is_empty());
        // Removing one is changing it.
        let old = map(&[("node-role.kubernetes.io/worker", "")]);
        assert_eq!(
            forbidden_labels(&BTreeMap::new(), &old),
            ["node-role.kubernetes.io/worker"]
        );
    }
}
