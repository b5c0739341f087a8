//! NodeRestriction (plugin/pkg/admission/noderestriction): what the Node
//! authorizer lets every kubelet write, each may write only for itself —
//! its own Node (without new taints, node-restriction labels or unknown
//! kubernetes.io labels), mirror pods bound to it, the status and evictions
//! of its pods, the status of claims, its Lease and CSINode, and tokens
//! bound to its pods. Anyone who is not a node passes untouched.
//!
//! kube-apiserver leaves the plugin off unless asked; kapi turns it on, as
//! kubeadm does, since the Node authorizer is on by default.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::admission::{Attributes, Operation, Plugin, Request, Subject, View};
use crate::api_error::{ApiError, ApiResult, Target};
use crate::loopback::Loopback;
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
/// resource).
pub fn applies(request: &Request<'_>) -> bool {
    let Some(node) = request.user.node_name() else {
        return false;
    };
    let info = request.attrs.scope.info();
    node.is_empty()
        || matches!(
            (info.group, info.plural),
            ("", "pods" | "nodes" | "persistentvolumeclaims")
                | ("coordination.k8s.io", "leases")
                | ("storage.k8s.io", "csinodes")
        )
}

/// A delete: the node's own pods, Lease and CSINode only (judged on the
/// name; a pod is read to see where it runs).
pub async fn judge(request: &Request<'_>, objects: &dyn Loopback) -> ApiResult<()> {
    let node = node_of(request)?;
    let attrs = &request.attrs;
    let info = attrs.scope.info();
    match (info.group, info.plural) {
        ("", "pods") => {
            let pod = existing_pod(objects, attrs, &attrs.name).await?;
            if pod["spec"]["nodeName"].as_str().unwrap_or_default() != node {
                return Err(attrs.forbidden(&format!(
                    "node {node:?} can only delete pods with spec.nodeName set to itself"
                )));
            }
            Ok(())
        }
        _ => check(request, node, None, None),
    }
}

/// A create or update of `object` (`old` the stored object on an update).
pub async fn admit(
    request: &Request<'_>,
    object: &Value,
    old: Option<&Value>,
    objects: &dyn Loopback,
) -> ApiResult<()> {
    let node = node_of(request)?;
    let info = request.attrs.scope.info();
    if (info.group, info.plural) == ("", "pods")
        && request.operation == Operation::Create
        && subresource(request).is_empty()
    {
        return admit_mirror_pod(&request.attrs, node, object, objects).await;
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
    object: Option<&Value>,
    old: Option<&Value>,
) -> ApiResult<()> {
    let attrs = &request.attrs;
    let refuse = |why: String| Err(attrs.forbidden(&why));
    let info = attrs.scope.info();
    let sub = subresource(request);
    match (info.group, info.plural) {
        ("", "pods") => match (sub, request.operation) {
            ("", _) => refuse(format!(
                "unexpected operation {:?}, node {node:?} can only create and delete mirror pods",
                operation(request)
            )),
            ("status", Operation::Update) => {
                let (Some(new), Some(old)) = (object, old) else {
                    return Ok(());
                };
                if old["spec"]["nodeName"].as_str().unwrap_or_default() != node {
                    return refuse(format!(
                        "node {node:?} can only update pod status for pods with spec.nodeName set to itself"
                    ));
                }
                if labels(old) != labels(new) {
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
        },
        ("", "nodes") => {
            if attrs.name != node {
                return refuse(format!(
                    "node {node:?} is not allowed to modify node {:?}",
                    attrs.name
                ));
            }
            let Some(new) = object else {
                return Ok(());
            };
            match old {
                None => {
                    if !new["spec"]["configSource"].is_null() {
                        return refuse(format!(
                            "node {node:?} is not allowed to create pods with a non-nil configSource"
                        ));
                    }
                    let forbidden = forbidden_labels(&labels(new), &BTreeMap::new());
                    if !forbidden.is_empty() {
                        return refuse(format!(
                            "node {node:?} is not allowed to set the following labels: {}",
                            forbidden.join(", ")
                        ));
                    }
                }
                Some(old) => {
                    let source = &new["spec"]["configSource"];
                    if !source.is_null() && *source != old["spec"]["configSource"] {
                        return refuse(format!(
                            "node {node:?} is not allowed to update configSource to a new non-nil configSource"
                        ));
                    }
                    if taints(new) != taints(old) {
                        return refuse(format!("node {node:?} is not allowed to modify taints"));
                    }
                    let forbidden = forbidden_labels(&labels(new), &labels(old));
                    if !forbidden.is_empty() {
                        return refuse(format!(
                            "is not allowed to modify labels: {}",
                            forbidden.join(", ")
                        ));
                    }
                }
            }
            Ok(())
        }
        ("", "persistentvolumeclaims") => match (sub, request.operation, object, old) {
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
        },
        ("coordination.k8s.io", "leases") => {
            if attrs.namespace.as_deref() != Some(crate::authorizers::node::NODE_LEASE_NAMESPACE) {
                return refuse(format!(
                    "can only access leases in the {:?} system namespace",
                    crate::authorizers::node::NODE_LEASE_NAMESPACE
                ));
            }
            if attrs.name != node {
                return refuse(
                    "can only access node lease with the same name as the requesting node"
                        .to_owned(),
                );
            }
            Ok(())
        }
        ("storage.k8s.io", "csinodes") => {
            if attrs.name != node {
                return refuse(
                    "can only access CSINode with the same name as the requesting node".to_owned(),
                );
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A node may create only a mirror pod of its own: bound to it, owned by
/// its Node (as the controller, without blocking the owner's deletion),
/// and using no service account, secret, config map, trust bundle or
/// claim.
async fn admit_mirror_pod(
    attrs: &Attributes<'_>,
    node: &str,
    pod: &Value,
    objects: &dyn Loopback,
) -> ApiResult<()> {
    let refuse = |why: String| Err(attrs.forbidden(&why));
    const MIRROR: &str = "kubernetes.io/config.mirror";
    if pod["metadata"]["annotations"].get(MIRROR).is_none() {
        return refuse(format!(
            "pod does not have {MIRROR:?} annotation, node {node:?} can only create mirror pods"
        ));
    }
    if pod["spec"]["nodeName"].as_str().unwrap_or_default() != node {
        return refuse(format!(
            "node {node:?} can only create pods with spec.nodeName set to itself"
        ));
    }
    let owners = pod["metadata"]["ownerReferences"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let owner = match owners {
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
    if owner["apiVersion"] != "v1" || owner["kind"] != "Node" || owner["name"] != node {
        return refuse(format!(
            "node {node:?} can only create pods with an owner reference set to itself"
        ));
    }
    if owner["controller"] != true {
        return refuse(format!(
            "node {node:?} can only create pods with a controller owner reference set to itself"
        ));
    }
    if owner["blockOwnerDeletion"] == true {
        return refuse(format!(
            "node {node:?} must not set blockOwnerDeletion on an owner reference"
        ));
    }
    let Some(node_object) = objects.read(("", "v1", "nodes"), None, node).await? else {
        return Err(ApiError::not_found(Target {
            group: "",
            resource: "node",
            name: node,
        }));
    };
    let (expected, got) = (&owner["uid"], &node_object["metadata"]["uid"]);
    if expected != got {
        return refuse(format!(
            "node {node} UID mismatch: expected {} got {}",
            expected.as_str().unwrap_or_default(),
            got.as_str().unwrap_or_default()
        ));
    }
    let spec = &pod["spec"];
    if !spec["serviceAccountName"]
        .as_str()
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
    let volumes = spec["volumes"].as_array().map_or(&[][..], Vec::as_slice);
    let bundles = volumes.iter().any(|volume| {
        volume["projected"]["sources"]
            .as_array()
            .is_some_and(|sources| sources.iter().any(|s| !s["clusterTrustBundle"].is_null()))
    });
    if bundles {
        return refuse(format!(
            "node {node:?} can not create pods that reference clustertrustbundles"
        ));
    }
    if volumes
        .iter()
        .any(|volume| !volume["persistentVolumeClaim"].is_null())
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
) -> ApiResult<Value> {
    let namespace = attrs.namespace.as_deref();
    match objects.read(("", "v1", "pods"), namespace, name).await? {
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
    if pod["spec"]["nodeName"].as_str().unwrap_or_default() != node {
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
    request: &Value,
    objects: &dyn Loopback,
) -> ApiResult<()> {
    let reference = &request["spec"]["boundObjectRef"];
    let name = reference["name"].as_str().unwrap_or_default();
    if reference["apiVersion"] != "v1" || reference["kind"] != "Pod" || name.is_empty() {
        return Err(attrs.forbidden("node requested token not bound to a pod"));
    }
    let uid = reference["uid"].as_str().unwrap_or_default();
    if uid.is_empty() {
        return Err(attrs.forbidden("node requested token with a pod binding without a uid"));
    }
    let pod = existing_pod(objects, attrs, name).await?;
    if pod["metadata"]["uid"] != uid {
        return Err(attrs.forbidden(&format!(
            "the UID in the bound object reference ({uid}) does not match the UID in record. The object might have been deleted and then recreated"
        )));
    }
    if pod["spec"]["nodeName"].as_str().unwrap_or_default() != node {
        return Err(
            attrs.forbidden("node requested token bound to a pod scheduled on a different node")
        );
    }
    Ok(())
}

fn labels(object: &Value) -> BTreeMap<&str, &str> {
    object["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
        .collect()
}

/// A node's taints, with an empty list the same as none.
fn taints(node: &Value) -> &[Value] {
    node["spec"]["taints"].as_array().map_or(&[], Vec::as_slice)
}

/// A pod's resource claim statuses: name and claim name, in order.
fn claim_statuses(pod: &Value) -> Vec<(&Value, &Value)> {
    pod["status"]["resourceClaimStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|status| (&status["name"], &status["resourceClaimName"]))
        .collect()
}

/// A claim without what a node may change in it: its resource version,
/// managed fields, and the status' capacity, conditions and allocated
/// resources (and their statuses).
fn beyond_claim_status(claim: &Value) -> Value {
    let mut claim = claim.clone();
    if let Some(meta) = claim["metadata"].as_object_mut() {
        meta.remove("resourceVersion");
        meta.remove("managedFields");
    }
    if let Some(status) = claim["status"].as_object_mut() {
        for field in [
            "capacity",
            "conditions",
            "allocatedResources",
            "allocatedResourceStatuses",
        ] {
            status.remove(field);
        }
    }
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
        let object = object.json_mut()?;
        let old = old.map(View::json).transpose()?;
        admit(request, object, old, objects).await
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
