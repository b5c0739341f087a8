//! RBAC: the roles and bindings of rbac.authorization.k8s.io, evaluated as
//! kube-apiserver's RBAC authorizer (k8s.io/kubernetes
//! `plugin/pkg/auth/authorizer/rbac`) evaluates them.
//!
//! A request is allowed when a ClusterRoleBinding, or a RoleBinding of the
//! request's namespace, binds one of the user's subjects (the user, a group
//! of theirs, or their service account) to a role with a rule that covers
//! it. Nothing is ever denied outright: with no such rule RBAC has no
//! opinion, and the reason lists the roles it could not find.

mod authorizer;
pub mod rules;

pub use authorizer::RbacAuthorizer;

use std::collections::HashMap;

use kapi_api_types::rbac::v1;
use kapi_runtime::meta::ObjectMeta;

use crate::authz::{Attributes, Decision, Target};
use crate::user::UserInfo;
use rules::PolicyRule;

/// The RBAC objects at one moment, indexed for evaluation.
#[derive(Debug, Default)]
pub struct Policy {
    cluster_roles: HashMap<String, Vec<PolicyRule>>,
    roles: HashMap<(String, String), Vec<PolicyRule>>,
    cluster_role_bindings: Vec<Binding>,
    role_bindings: HashMap<String, Vec<Binding>>,
    /// The cluster bindings of each user, group and service account
    /// (`namespace:name`), for the quick yes or no of [`Policy::allows`].
    by_user: HashMap<String, Vec<usize>>,
    by_group: HashMap<String, Vec<usize>>,
    by_service_account: HashMap<String, Vec<usize>>,
}

/// A RoleBinding or ClusterRoleBinding, as the policy reads it.
#[derive(Clone, Debug, Default)]
struct Binding {
    metadata: Meta,
    role_ref: RoleRef,
    subjects: Vec<Subject>,
}

#[derive(Clone, Debug, Default)]
struct Meta {
    name: String,
    namespace: String,
}

#[derive(Clone, Debug, Default)]
struct RoleRef {
    kind: String,
    name: String,
}

#[derive(Clone, Debug, Default)]
struct Subject {
    kind: String,
    name: String,
    namespace: String,
}

impl Binding {
    fn new(
        metadata: &ObjectMeta,
        role_ref: &v1::rolebinding::RoleRef,
        subjects: &[v1::rolebinding::Subject],
    ) -> Binding {
        Binding {
            metadata: Meta::of(metadata),
            role_ref: RoleRef {
                kind: role_ref.kind.clone(),
                name: role_ref.name.clone(),
            },
            subjects: subjects
                .iter()
                .map(|s| Subject {
                    kind: s.kind.clone(),
                    name: s.name.clone(),
                    namespace: s.namespace.clone().unwrap_or_default(),
                })
                .collect(),
        }
    }
}

impl Meta {
    fn of(metadata: &ObjectMeta) -> Meta {
        Meta {
            name: metadata.name.clone().unwrap_or_default(),
            namespace: metadata.namespace.clone().unwrap_or_default(),
        }
    }
}

/// The four kinds' objects at one moment.
#[derive(Debug, Default)]
pub struct RbacObjects<'a> {
    /// ClusterRoles.
    pub cluster_roles: Vec<&'a v1::ClusterRole>,
    /// Roles.
    pub roles: Vec<&'a v1::Role>,
    /// ClusterRoleBindings.
    pub cluster_role_bindings: Vec<&'a v1::ClusterRoleBinding>,
    /// RoleBindings.
    pub role_bindings: Vec<&'a v1::RoleBinding>,
}

impl Policy {
    /// The policy of `objects`.
    pub fn new(objects: &RbacObjects<'_>) -> Policy {
        let sorted = |mut list: Vec<Binding>| {
            list.sort_by(|a: &Binding, b| a.metadata.name.cmp(&b.metadata.name));
            list
        };
        let mut role_bindings: HashMap<String, Vec<Binding>> = HashMap::new();
        let namespaced = objects.role_bindings.iter().map(|b| {
            Binding::new(
                &b.metadata,
                &b.role_ref,
                b.subjects.as_deref().unwrap_or_default(),
            )
        });
        for binding in sorted(namespaced.collect()) {
            role_bindings
                .entry(binding.metadata.namespace.clone())
                .or_default()
                .push(binding);
        }
        let cluster_role_bindings = sorted(
            objects
                .cluster_role_bindings
                .iter()
                .map(|b| {
                    Binding::new(
                        &b.metadata,
                        &b.role_ref,
                        b.subjects.as_deref().unwrap_or_default(),
                    )
                })
                .collect(),
        );
        let mut by_user: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_group: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_service_account: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, binding) in cluster_role_bindings.iter().enumerate() {
            for subject in &binding.subjects {
                let (map, key) = match subject.kind.as_str() {
                    "User" => (&mut by_user, subject.name.clone()),
                    "Group" => (&mut by_group, subject.name.clone()),
                    "ServiceAccount" if !subject.namespace.is_empty() => (
                        &mut by_service_account,
                        format!("{}:{}", subject.namespace, subject.name),
                    ),
                    _ => continue,
                };
                let list = map.entry(key).or_default();
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
        }
        Policy {
            by_user,
            by_group,
            by_service_account,
            cluster_roles: objects
                .cluster_roles
                .iter()
                .map(|r| (Meta::of(&r.metadata).name, rules(&r.rules)))
                .collect(),
            roles: objects
                .roles
                .iter()
                .map(|r| {
                    let Meta { name, namespace } = Meta::of(&r.metadata);
                    ((namespace, name), rules(&r.rules))
                })
                .collect(),
            cluster_role_bindings,
            role_bindings,
        }
    }

    /// Whether RBAC allows `request`: [`Policy::authorize`]'s yes or no,
    /// without its reasons, looking only at the bindings of the user's
    /// subjects (what the request filter asks of every request).
    pub fn allows(&self, request: &Attributes<'_>) -> bool {
        let user = request.user;
        let rules_allow = |rules: Option<&Vec<PolicyRule>>| {
            rules.is_some_and(|rules| rules.iter().any(|rule| rule.allows(request)))
        };
        // A service account's user name ends in `<namespace>:<name>`.
        let account = user
            .service_account()
            .and_then(|_| user.name.strip_prefix("system:serviceaccount:"));
        let cluster_wide = std::iter::once(self.by_user.get(user.name.as_str()))
            .chain(user.groups.iter().map(|g| self.by_group.get(g.as_str())))
            .chain(std::iter::once(
                account.and_then(|a| self.by_service_account.get(a)),
            ))
            .flatten()
            .flatten()
            .any(|&i| {
                let role = &self.cluster_role_bindings[i].role_ref.name;
                rules_allow(self.cluster_roles.get(role))
            });
        if cluster_wide {
            return true;
        }
        let namespace = namespace_of(request);
        if namespace.is_empty() {
            return false;
        }
        self.role_bindings
            .get(namespace)
            .into_iter()
            .flatten()
            .filter(|binding| binding.subjects.iter().any(|s| applies(s, user, namespace)))
            .any(|binding| {
                let role = &binding.role_ref;
                if role.kind == "Role" {
                    rules_allow(self.roles.get(&(namespace.to_owned(), role.name.clone())))
                } else {
                    rules_allow(self.cluster_roles.get(&role.name))
                }
            })
    }

    /// RBAC's answer for `request`.
    pub fn authorize(&self, request: &Attributes<'_>) -> Decision {
        let mut errors = Vec::new();
        let mut allowed = None;
        self.visit(
            request.user,
            namespace_of(request),
            &mut |source, rules, error| {
                if let Some(error) = error {
                    errors.push(error);
                    return true;
                }
                if rules.iter().any(|rule| rule.allows(request)) {
                    allowed = Some(source.describe());
                    return false;
                }
                true
            },
        );
        if let Some(by) = allowed {
            return Decision::Allow(format!("RBAC: allowed by {by}"));
        }
        let reason = match errors.as_slice() {
            [] => String::new(),
            [one] => format!("RBAC: {one}"),
            many => format!("RBAC: [{}]", many.join(", ")),
        };
        Decision::NoOpinion(reason)
    }

    /// Every rule that applies to `user` in `namespace` (cluster-wide rules
    /// too), and the roles that could not be found: what a
    /// SelfSubjectRulesReview answers.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<PolicyRule>, Vec<String>) {
        let mut found = Vec::new();
        let mut errors = Vec::new();
        self.visit(user, namespace, &mut |_, rules, error| {
            match error {
                Some(error) => errors.push(error),
                None => found.extend_from_slice(rules),
            }
            true
        });
        (found, errors)
    }

    /// Calls `visit` with each binding of `user` that applies in `namespace`
    /// (cluster bindings first), its role's rules, or the error finding the
    /// role; stops when `visit` returns false.
    fn visit(&self, user: &UserInfo, namespace: &str, visit: &mut Visitor<'_>) {
        for binding in &self.cluster_role_bindings {
            let Some(subject) = binding.subjects.iter().find(|s| applies(s, user, "")) else {
                continue;
            };
            let source = Source {
                binding,
                subject,
                namespaced: false,
            };
            let keep_going = match self.cluster_roles.get(&binding.role_ref.name) {
                Some(rules) => visit(source, rules, None),
                None => visit(
                    source,
                    &[],
                    Some(not_found("clusterrole", &binding.role_ref.name)),
                ),
            };
            if !keep_going {
                return;
            }
        }
        if namespace.is_empty() {
            return;
        }
        for binding in self.role_bindings.get(namespace).into_iter().flatten() {
            let Some(subject) = binding
                .subjects
                .iter()
                .find(|s| applies(s, user, namespace))
            else {
                continue;
            };
            let source = Source {
                binding,
                subject,
                namespaced: true,
            };
            let role = &binding.role_ref;
            let rules = if role.kind == "Role" {
                self.roles
                    .get(&(namespace.to_owned(), role.name.clone()))
                    .ok_or_else(|| not_found("role", &role.name))
            } else {
                self.cluster_roles
                    .get(&role.name)
                    .ok_or_else(|| not_found("clusterrole", &role.name))
            };
            let keep_going = match rules {
                Ok(rules) => visit(source, rules, None),
                Err(error) => visit(source, &[], Some(error)),
            };
            if !keep_going {
                return;
            }
        }
    }
}

/// What [`Policy::visit`] calls with each binding that applies: its source,
/// its role's rules, or the error finding the role; false stops the visit.
type Visitor<'a> = dyn FnMut(Source<'_>, &[PolicyRule], Option<String>) -> bool + 'a;

/// A binding that applied, and through which subject.
struct Source<'a> {
    binding: &'a Binding,
    subject: &'a Subject,
    namespaced: bool,
}

impl Source<'_> {
    /// Upstream's words for it: `ClusterRoleBinding "b" of ClusterRole "r"
    /// to User "u"`, `RoleBinding "b/ns" of Role "r" to ServiceAccount
    /// "sa/ns"`.
    fn describe(&self) -> String {
        let binding = self.binding;
        let subject = self.subject;
        let namespace = &binding.metadata.namespace;
        let name = if self.namespaced {
            format!(
                "RoleBinding {:?}",
                format!("{}/{namespace}", binding.metadata.name)
            )
        } else {
            format!("ClusterRoleBinding {:?}", binding.metadata.name)
        };
        let who = if subject.kind == "ServiceAccount" {
            let home = if subject.namespace.is_empty() {
                namespace
            } else {
                &subject.namespace
            };
            format!("{}/{home}", subject.name)
        } else {
            subject.name.clone()
        };
        format!(
            "{name} of {} {:?} to {} {who:?}",
            binding.role_ref.kind, binding.role_ref.name, subject.kind
        )
    }
}

/// Whether `subject` of a binding in `namespace` (`""` for a cluster
/// binding) is `user`.
fn applies(subject: &Subject, user: &UserInfo, namespace: &str) -> bool {
    match subject.kind.as_str() {
        "User" => subject.name == user.name,
        "Group" => user.in_group(&subject.name),
        "ServiceAccount" => {
            let home = if subject.namespace.is_empty() {
                namespace
            } else {
                &subject.namespace
            };
            !home.is_empty()
                && user
                    .service_account()
                    .is_some_and(|(ns, name)| ns == home && name == subject.name)
        }
        _ => false,
    }
}

/// A role's rules, as the policy evaluates them.
fn rules(rules: &[v1::role::PolicyRule]) -> Vec<PolicyRule> {
    rules.iter().map(PolicyRule::from).collect()
}

fn namespace_of<'a>(request: &Attributes<'a>) -> &'a str {
    match request.target {
        Target::Resource { namespace, .. } => namespace,
        Target::Path(_) => "",
    }
}

fn not_found(kind: &str, name: &str) -> String {
    format!("{kind}.rbac.authorization.k8s.io {name:?} not found")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn typed<T: serde::de::DeserializeOwned>(values: Vec<serde_json::Value>) -> Vec<T> {
        values
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect()
    }

    fn policy() -> Policy {
        let (cluster_roles, roles, cluster_role_bindings, role_bindings): (
            Vec<v1::ClusterRole>,
            Vec<v1::Role>,
            Vec<v1::ClusterRoleBinding>,
            Vec<v1::RoleBinding>,
        ) = (
            typed(vec![
                json!({"metadata": {"name": "reader"}, "rules": [
                    {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]}),
                json!({"metadata": {"name": "health"}, "rules": [
                    {"verbs": ["get"], "nonResourceURLs": ["/healthz*"]}]}),
            ]),
            typed(vec![
                json!({"metadata": {"name": "cm-writer", "namespace": "team"}, "rules": [
                {"verbs": ["create"], "apiGroups": [""], "resources": ["configmaps"]}]}),
            ]),
            typed(vec![
                json!({"metadata": {"name": "readers"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "reader"},
                    "subjects": [{"kind": "Group", "name": "devs"}]}),
                json!({"metadata": {"name": "everyone-health"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "health"},
                    "subjects": [{"kind": "Group", "name": "system:authenticated"}]}),
                json!({"metadata": {"name": "dangling"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "gone"},
                    "subjects": [{"kind": "User", "name": "carol"}]}),
            ]),
            typed(vec![
                json!({"metadata": {"name": "writers", "namespace": "team"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
                    "subjects": [{"kind": "ServiceAccount", "name": "bot"}]}),
                json!({"metadata": {"name": "team-readers", "namespace": "team"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "reader"},
                    "subjects": [{"kind": "User", "name": "carol"}]}),
            ]),
        );
        Policy::new(&RbacObjects {
            cluster_roles: cluster_roles.iter().collect(),
            roles: roles.iter().collect(),
            cluster_role_bindings: cluster_role_bindings.iter().collect(),
            role_bindings: role_bindings.iter().collect(),
        })
    }

    fn pods<'a>(user: &'a UserInfo, verb: &'a str, namespace: &'a str) -> Attributes<'a> {
        Attributes {
            user,
            verb,
            target: Target::Resource {
                namespace,
                group: "",
                resource: "pods",
                subresource: "",
                name: "",
                fields: None,
            },
        }
    }

    #[test]
    fn bindings_grant_their_roles_rules_to_their_subjects() {
        let policy = policy();
        let dev = UserInfo::new("dave", &["devs", "system:authenticated"]);
        assert_eq!(
            policy.authorize(&pods(&dev, "list", "anywhere")),
            Decision::Allow(
                "RBAC: allowed by ClusterRoleBinding \"readers\" of ClusterRole \"reader\" to Group \"devs\""
                    .to_owned()
            )
        );
        assert_eq!(
            policy.authorize(&pods(&dev, "delete", "anywhere")),
            Decision::NoOpinion(String::new())
        );
        let health = Attributes {
            user: &dev,
            verb: "get",
            target: Target::Path("/healthz/ping"),
        };
        assert!(matches!(policy.authorize(&health), Decision::Allow(_)));

        // A RoleBinding grants only in its namespace; a missing role is named.
        let carol = UserInfo::new("carol", &[]);
        assert_eq!(
            policy.authorize(&pods(&carol, "get", "team")),
            Decision::Allow(
                "RBAC: allowed by RoleBinding \"team-readers/team\" of ClusterRole \"reader\" to User \"carol\""
                    .to_owned()
            )
        );
        assert_eq!(
            policy.authorize(&pods(&carol, "get", "other")),
            Decision::NoOpinion(
                "RBAC: clusterrole.rbac.authorization.k8s.io \"gone\" not found".to_owned()
            )
        );

        // A service account subject without a namespace is the binding's.
        let bot = UserInfo::new("system:serviceaccount:team:bot", &[]);
        let create = Attributes {
            user: &bot,
            verb: "create",
            target: Target::Resource {
                namespace: "team",
                group: "",
                resource: "configmaps",
                subresource: "",
                name: "",
                fields: None,
            },
        };
        assert_eq!(
            policy.authorize(&create),
            Decision::Allow(
                "RBAC: allowed by RoleBinding \"writers/team\" of Role \"cm-writer\" to ServiceAccount \"bot/team\""
                    .to_owned()
            )
        );
        let other_bot = UserInfo::new("system:serviceaccount:other:bot", &[]);
        let create = Attributes {
            user: &other_bot,
            ..create
        };
        assert!(matches!(policy.authorize(&create), Decision::NoOpinion(_)));
    }

    #[test]
    fn the_quick_answer_agrees_with_the_reasoned_one() {
        let policy = policy();
        let users = [
            UserInfo::new("dave", &["devs", "system:authenticated"]),
            UserInfo::new("carol", &[]),
            UserInfo::new("system:serviceaccount:team:bot", &[]),
            UserInfo::new("system:serviceaccount:other:bot", &[]),
            UserInfo::new("nobody", &["system:authenticated"]),
        ];
        for user in &users {
            for verb in ["get", "list", "create", "delete"] {
                for namespace in ["team", "other", ""] {
                    for resource in ["pods", "configmaps"] {
                        let request = Attributes {
                            user,
                            verb,
                            target: Target::Resource {
                                namespace,
                                group: "",
                                resource,
                                subresource: "",
                                name: "",
                                fields: None,
                            },
                        };
                        let reasoned = matches!(policy.authorize(&request), Decision::Allow(_));
                        assert_eq!(policy.allows(&request), reasoned, "{request:?}");
                    }
                }
            }
            for path in ["/healthz", "/metrics"] {
                let request = Attributes {
                    user,
                    verb: "get",
                    target: Target::Path(path),
                };
                let reasoned = matches!(policy.authorize(&request), Decision::Allow(_));
                assert_eq!(policy.allows(&request), reasoned, "{request:?}");
            }
        }
    }

    #[test]
    fn the_rules_of_a_user_in_a_namespace() {
        let policy = policy();
        let carol = UserInfo::new("carol", &[]);
        let (rules, errors) = policy.rules_for(&carol, "team");
        assert_eq!(rules.len(), 1);
        assert_eq!(
            errors,
            ["clusterrole.rbac.authorization.k8s.io \"gone\" not found"]
        );
    }
}
