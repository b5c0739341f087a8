//! The Node authorizer (`--authorization-mode=Node`, upstream's
//! `plugin/pkg/auth/authorizer/node`): a kubelet (`system:node:<name>` in
//! `system:nodes`) may read the secrets, config maps, claims, volumes and
//! attachments of the pods bound to its node, ask for its pods' service
//! account tokens, keep its own Lease and CSINode, read its own Node and
//! list its own pods; everything else it may do is the `system:node` role's
//! rules, the same for every node. The NodeRestriction admission plugin
//! then holds its writes to its own objects.
//!
//! Anyone who is not a node gets no opinion, so the next authorizer (RBAC)
//! decides.

mod relations;

pub use relations::PodReferences;
use relations::{Caches, Vertex};

use super::rbac::rules::PolicyRule;
use crate::authz::{Attributes, Authorize, Decision, Rules, Target};
use crate::registry::Registry;
use crate::selectors::field::FieldSelector;
use crate::user::UserInfo;

/// The namespace of the nodes' Leases.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

/// The Node authorizer.
pub struct NodeAuthorizer {
    /// What every node may do (the `system:node` ClusterRole's rules).
    rules: Vec<PolicyRule>,
    caches: Caches,
}

impl Default for NodeAuthorizer {
    fn default() -> NodeAuthorizer {
        NodeAuthorizer {
            rules: super::bootstrap::cluster_role_rules("system:node"),
            caches: Caches::default(),
        }
    }
}

fn no(reason: impl Into<String>) -> Decision {
    Decision::NoOpinion(reason.into())
}

fn yes() -> Decision {
    Decision::Allow(String::new())
}

#[async_trait::async_trait]
impl Authorize for NodeAuthorizer {
    async fn authorize(&self, request: &Attributes<'_>, registry: &Registry) -> Decision {
        NodeAuthorizer::authorize(self, request, registry).await
    }

    async fn rules_for(&self, user: &UserInfo, _namespace: &str, _registry: &Registry) -> Rules {
        // A node's permissions depend on its pods: no list of rules.
        let errors = match user.node_name() {
            Some(_) => vec!["node authorizer does not support user rule resolution".to_owned()],
            None => Vec::new(),
        };
        Rules {
            errors,
            ..Rules::default()
        }
    }
}

impl NodeAuthorizer {
    /// The decision on `request`: no opinion for anyone but a node.
    pub async fn authorize(&self, request: &Attributes<'_>, registry: &Registry) -> Decision {
        let Some(node) = request.user.node_name() else {
            return no("");
        };
        if node.is_empty() {
            return no(format!("unknown node for user {:?}", request.user.name));
        }
        let Target::Resource {
            group,
            resource,
            subresource,
            namespace,
            name,
            fields,
        } = &request.target
        else {
            return self.by_rules(request);
        };
        let asked = Asked {
            node,
            verb: request.verb,
            namespace,
            name,
            subresource,
            fields: *fields,
        };
        let vertex = match (*group, *resource) {
            ("", "secrets") => return self.read_namespaced(registry, &asked, Vertex::Secret).await,
            ("", "configmaps") => {
                return self
                    .read_namespaced(registry, &asked, Vertex::ConfigMap)
                    .await;
            }
            ("", "persistentvolumeclaims") if *subresource == "status" => {
                return self.update_status(registry, &asked, Vertex::Claim).await;
            }
            ("", "persistentvolumeclaims") => Vertex::Claim,
            ("", "persistentvolumes") => Vertex::Volume,
            ("resource.k8s.io", "resourceclaims") => Vertex::ResourceClaim,
            ("storage.k8s.io", "volumeattachments") => Vertex::VolumeAttachment,
            ("", "serviceaccounts") => return self.create_token(registry, &asked).await,
            ("coordination.k8s.io", "leases") => return lease(&asked),
            ("storage.k8s.io", "csinodes") => return csi_node(&asked),
            ("resource.k8s.io", "resourceslices") => {
                return self.resource_slice(registry, &asked).await;
            }
            ("", "nodes") => return own_node(&asked),
            ("", "pods") => return self.pod(registry, &asked).await,
            _ => return self.by_rules(request),
        };
        self.get(registry, &asked, vertex).await
    }

    /// What every node may do.
    fn by_rules(&self, request: &Attributes<'_>) -> Decision {
        if self.rules.iter().any(|rule| rule.allows(request)) {
            yes()
        } else {
            no("")
        }
    }

    /// A get of one object related to the node.
    async fn get(&self, registry: &Registry, asked: &Asked<'_>, vertex: Vertex) -> Decision {
        if asked.verb != "get" {
            return no("can only get individual resources of this type");
        }
        if !asked.subresource.is_empty() {
            return no("cannot get subresource");
        }
        self.related(registry, asked, vertex).await
    }

    /// A get, list or watch of one namespaced object related to the node.
    async fn read_namespaced(
        &self,
        registry: &Registry,
        asked: &Asked<'_>,
        vertex: Vertex,
    ) -> Decision {
        if !matches!(asked.verb, "get" | "list" | "watch") {
            return no("can only read resources of this type");
        }
        if !asked.subresource.is_empty() {
            return no("cannot read subresource");
        }
        if asked.namespace.is_empty() {
            return no("can only read namespaced object of this type");
        }
        self.related(registry, asked, vertex).await
    }

    /// An update of the status of an object related to the node.
    async fn update_status(
        &self,
        registry: &Registry,
        asked: &Asked<'_>,
        vertex: Vertex,
    ) -> Decision {
        if !matches!(asked.verb, "update" | "patch") {
            return no("can only get/update/patch this type");
        }
        if asked.subresource != "status" {
            return no("can only update status subresource");
        }
        self.related(registry, asked, vertex).await
    }

    /// A service account token for a pod of the node.
    async fn create_token(&self, registry: &Registry, asked: &Asked<'_>) -> Decision {
        if asked.verb != "create" || asked.name.is_empty() {
            return no("can only create tokens for individual service accounts");
        }
        if asked.subresource != "token" {
            return no("can only create token subresource of serviceaccount");
        }
        self.related_by_name(registry, asked, Vertex::ServiceAccount)
            .await
    }

    async fn resource_slice(&self, registry: &Registry, asked: &Asked<'_>) -> Decision {
        if !asked.subresource.is_empty() {
            return no("cannot authorize ResourceSlice subresources");
        }
        match asked.verb {
            // NodeRestriction checks the new slice names the node.
            "create" => yes(),
            "get" | "update" | "patch" | "delete" => {
                self.related(registry, asked, Vertex::ResourceSlice).await
            }
            "watch" | "list" | "deletecollection" => {
                if asked.pins("spec.nodeName") {
                    yes()
                } else {
                    no(
                        "can only list/watch/deletecollection resourceslices with nodeName field selector",
                    )
                }
            }
            _ => no(
                "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection",
            ),
        }
    }

    async fn pod(&self, registry: &Registry, asked: &Asked<'_>) -> Decision {
        match (asked.subresource, asked.verb) {
            ("", "get") => self.get(registry, asked, Vertex::Pod).await,
            ("", "list" | "watch") => {
                if asked.pins("spec.nodeName") {
                    yes()
                } else if !asked.name.is_empty() {
                    self.related(registry, asked, Vertex::Pod).await
                } else {
                    no("can only list/watch pods with spec.nodeName field selector")
                }
            }
            // Mirror pods, the status of its pods, evictions of its pods:
            // NodeRestriction holds them to the node's own pods.
            ("", "create" | "delete") | ("status", "update" | "patch") | ("eviction", "create") => {
                yes()
            }
            _ => no(""),
        }
    }

    /// Whether the object asked for is related to the node (a named one).
    async fn related(&self, registry: &Registry, asked: &Asked<'_>, vertex: Vertex) -> Decision {
        if asked.name.is_empty() {
            return no("No Object name found");
        }
        self.related_by_name(registry, asked, vertex).await
    }

    async fn related_by_name(
        &self,
        registry: &Registry,
        asked: &Asked<'_>,
        vertex: Vertex,
    ) -> Decision {
        let related = self
            .caches
            .related(registry, asked.node, vertex, asked.namespace, asked.name)
            .await;
        if related {
            yes()
        } else {
            no(format!(
                "no relationship found between node '{}' and this object",
                asked.node
            ))
        }
    }
}

/// A node's request to a resource the authorizer subdivides.
struct Asked<'a> {
    node: &'a str,
    verb: &'a str,
    namespace: &'a str,
    name: &'a str,
    subresource: &'a str,
    fields: Option<&'a FieldSelector>,
}

impl Asked<'_> {
    /// Whether the request's field selector pins `field` to the node.
    fn pins(&self, field: &str) -> bool {
        self.fields
            .is_some_and(|fields| fields.equals_terms(field).any(|value| value == self.node))
    }
}

/// The node's own Lease in `kube-node-lease`.
fn lease(asked: &Asked<'_>) -> Decision {
    if !matches!(asked.verb, "get" | "create" | "update" | "patch" | "delete") {
        return no("can only get, create, update, patch, or delete a node lease");
    }
    if asked.namespace != NODE_LEASE_NAMESPACE {
        return no(format!(
            "can only access leases in the {NODE_LEASE_NAMESPACE:?} system namespace"
        ));
    }
    // A create's name is in its body: NodeRestriction checks it.
    if asked.verb != "create" && asked.name != asked.node {
        return no("can only access node lease with the same name as the requesting node");
    }
    yes()
}

/// The node's own CSINode.
fn csi_node(asked: &Asked<'_>) -> Decision {
    if !matches!(asked.verb, "get" | "create" | "update" | "patch" | "delete") {
        return no("can only get, create, update, patch, or delete a CSINode");
    }
    if !asked.subresource.is_empty() {
        return no("cannot authorize CSINode subresources");
    }
    if asked.verb != "create" && asked.name != asked.node {
        return no("can only access CSINode with the same name as the requesting node");
    }
    yes()
}

/// The node's own Node: written (NodeRestriction holds it to its own), and
/// read by name (before it exists, so not through relations).
fn own_node(asked: &Asked<'_>) -> Decision {
    match (asked.subresource, asked.verb) {
        ("", "create" | "update" | "patch") | ("status", "update" | "patch") => yes(),
        ("", "get" | "list" | "watch") => {
            if asked.name == asked.node {
                yes()
            } else if asked.name.is_empty() {
                no(format!(
                    "node '{}' cannot read all nodes, only its own Node object",
                    asked.node
                ))
            } else {
                no(format!(
                    "node '{}' cannot read '{}', only its own Node object",
                    asked.node, asked.name
                ))
            }
        }
        _ => no(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user::UserInfo;

    fn asked<'a>(verb: &'a str, namespace: &'a str, name: &'a str) -> Asked<'a> {
        Asked {
            node: "n1",
            verb,
            namespace,
            name,
            subresource: "",
            fields: None,
        }
    }

    #[test]
    fn a_node_keeps_its_own_lease_and_node() {
        let allowed = |d: Decision| matches!(d, Decision::Allow(_));
        assert!(allowed(lease(&asked("update", "kube-node-lease", "n1"))));
        assert!(allowed(lease(&asked("create", "kube-node-lease", ""))));
        assert_eq!(
            lease(&asked("get", "kube-node-lease", "n2")),
            no("can only access node lease with the same name as the requesting node")
        );
        assert_eq!(
            lease(&asked("get", "default", "n1")),
            no("can only access leases in the \"kube-node-lease\" system namespace")
        );
        assert!(allowed(own_node(&asked("get", "", "n1"))));
        assert_eq!(
            own_node(&asked("list", "", "")),
            no("node 'n1' cannot read all nodes, only its own Node object")
        );
        assert_eq!(own_node(&asked("delete", "", "n1")), no(""));
    }

    #[test]
    fn a_node_lists_only_its_own_pods() {
        let fields = FieldSelector::parse("spec.nodeName=n1").unwrap();
        let other = FieldSelector::parse("spec.nodeName!=n1").unwrap();
        let mut list = asked("list", "", "");
        assert!(!list.pins("spec.nodeName"));
        list.fields = Some(&other);
        assert!(!list.pins("spec.nodeName"));
        list.fields = Some(&fields);
        assert!(list.pins("spec.nodeName"));
    }

    #[test]
    fn the_node_rules_are_the_system_node_roles() {
        let authorizer = NodeAuthorizer::default();
        assert!(!authorizer.rules.is_empty());
        let node = UserInfo::new("system:node:n1", &["system:nodes"]);
        let events = Attributes {
            user: &node,
            verb: "create",
            target: Target::Resource {
                namespace: "default",
                group: "",
                resource: "events",
                subresource: "",
                name: "",
                fields: None,
            },
        };
        assert_eq!(authorizer.by_rules(&events), yes());
    }
}
