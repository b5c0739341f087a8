//! The RBAC kinds' own rule beyond validation (upstream's policy-based
//! storage of `pkg/registry/rbac`): a user writes a Role or ClusterRole only
//! with rules they hold, or with the `escalate` verb on it; a RoleBinding or
//! ClusterRoleBinding only to a role whose rules they hold, or with the
//! `bind` verb on it. system:masters may do either.

use std::sync::Arc;

use async_trait::async_trait;
use kapi_api_types::rbac::v1::{self, ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kapi_runtime::Resource;

use crate::api_error::{ApiError, ApiResult};
use crate::authorizers::escalation::{describe_missing, uncovered};
use crate::authorizers::rbac::RbacAuthorizer;
use crate::authorizers::rbac::rules::PolicyRule;
use crate::authz::{Attributes, Authorizer, Decision, Target};
use crate::registry::hooks::KindRest;
use crate::registry::{Object, Registry, Scope};
use crate::user::{MASTERS, UserInfo};

/// Which RBAC kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Role or ClusterRole.
    Role,
    /// RoleBinding or ClusterRoleBinding.
    Binding,
}

/// The hooks of one RBAC kind.
pub struct RbacRest {
    /// Which kind.
    pub kind: Kind,
    /// Who decides `escalate` and `bind`.
    pub authorizer: Arc<Authorizer>,
    /// Whose rules users hold.
    pub rbac: Arc<RbacAuthorizer>,
}

#[async_trait]
impl KindRest for RbacRest {
    async fn authorize_write(
        &self,
        registry: &Registry,
        scope: Scope<'_>,
        object: &Object,
        old: Option<&Object>,
        user: &UserInfo,
    ) -> ApiResult<()> {
        if user.in_group(MASTERS) {
            return Ok(());
        }
        let new = Written::of(object)?;
        let namespace = scope.namespace.unwrap_or_default();
        let name = object.metadata().name();
        let info = scope.info();
        let verb = match self.kind {
            Kind::Role => "escalate",
            Kind::Binding => "bind",
        };
        // An update that changes only what the garbage collector changes
        // (owner references, finalizers) is not checked, as upstream's
        // IsOnlyMutatingGCFields; any other change is, labels too.
        if let Some(old) = old
            && same_but_gc_fields(old, object)
        {
            return Ok(());
        }
        let (group, resource, target_name) = match &new {
            Written::Role { .. } => (info.group, info.plural, name),
            Written::Binding(role) => {
                let plural = if role.kind == "Role" {
                    "roles"
                } else {
                    "clusterroles"
                };
                ("rbac.authorization.k8s.io", plural, role.name.as_str())
            }
        };
        let asked = Attributes {
            user,
            verb,
            target: Target::Resource {
                namespace,
                group,
                resource,
                subresource: "",
                name: target_name,
                fields: None,
            },
        };
        if let Decision::Allow(_) = self.authorizer.authorize(&asked, registry).await {
            return Ok(());
        }
        let policy = self.rbac.policy(registry).await;
        let (owned, errors) = policy.rules_for(user, namespace);
        let requested: Vec<PolicyRule> = match new {
            Written::Role { rules, aggregated } => {
                if aggregated {
                    let all = || vec!["*".to_owned()];
                    let everything = [
                        PolicyRule {
                            verbs: all(),
                            api_groups: all(),
                            resources: all(),
                            ..PolicyRule::default()
                        },
                        PolicyRule {
                            verbs: all(),
                            non_resource_urls: all(),
                            ..PolicyRule::default()
                        },
                    ];
                    if !uncovered(&owned, &everything).is_empty() {
                        return Err(ApiError::unauthorized_action(
                            info.group,
                            info.plural,
                            name,
                            "must have cluster-admin privileges to use the aggregationRule",
                        ));
                    }
                }
                rules.iter().map(PolicyRule::from).collect()
            }
            Written::Binding(role) => {
                let role_name = role.name.as_str();
                let found = if role.kind == "Role" {
                    let role =
                        crate::loopback::get::<Role>(registry, Some(namespace), role_name).await?;
                    role.map(|r| r.rules)
                } else {
                    let role =
                        crate::loopback::get::<ClusterRole>(registry, None, role_name).await?;
                    role.map(|r| r.rules)
                };
                // Upstream names the binding's resource with the role's name.
                let Some(rules) = found else {
                    return Err(ApiError::not_found(crate::api_error::Target {
                        group: info.group,
                        resource: info.plural,
                        name: role_name,
                    }));
                };
                rules.iter().map(PolicyRule::from).collect()
            }
        };
        let missing = uncovered(&owned, &requested);
        if missing.is_empty() {
            return Ok(());
        }
        let mut why = describe_missing(&user.name, &user.groups, &missing);
        if !errors.is_empty() {
            why.push_str(&format!("; resolution errors: [{}]", errors.join(" ")));
        }
        Err(ApiError::unauthorized_action(
            info.group,
            info.plural,
            name,
            &why,
        ))
    }
}

/// What a write of one of the four RBAC kinds asks for.
enum Written<'o> {
    /// A Role or ClusterRole: its rules, and whether it aggregates others.
    Role {
        rules: &'o [v1::role::PolicyRule],
        aggregated: bool,
    },
    /// A RoleBinding or ClusterRoleBinding: the role it binds.
    Binding(&'o v1::rolebinding::RoleRef),
}

impl Written<'_> {
    fn of(object: &Object) -> ApiResult<Written<'_>> {
        if let Some(role) = object.downcast_ref::<Role>() {
            return Ok(Written::Role {
                rules: &role.rules,
                aggregated: false,
            });
        }
        if let Some(role) = object.downcast_ref::<ClusterRole>() {
            return Ok(Written::Role {
                rules: &role.rules,
                aggregated: role.aggregation_rule.is_some(),
            });
        }
        if let Some(binding) = object.downcast_ref::<RoleBinding>() {
            return Ok(Written::Binding(&binding.role_ref));
        }
        match object.downcast_ref::<ClusterRoleBinding>() {
            Some(binding) => Ok(Written::Binding(&binding.role_ref)),
            None => Err(ApiError::internal("an RBAC write of another kind")),
        }
    }
}

/// Whether two versions of an object differ only in what the garbage
/// collector changes and what the server keeps for itself (versions,
/// ownership, times).
fn same_but_gc_fields(old: &Object, new: &Object) -> bool {
    fn same<K: Resource + Clone + PartialEq>(old: &Object, new: &Object) -> Option<bool> {
        let strip = |object: &K| {
            let mut object = object.clone();
            let meta = object.metadata_mut();
            meta.owner_references = None;
            meta.finalizers = None;
            meta.resource_version = None;
            meta.managed_fields = None;
            meta.generation = None;
            meta.creation_timestamp = None;
            meta.uid = None;
            object
        };
        Some(strip(old.downcast_ref::<K>()?) == strip(new.downcast_ref::<K>()?))
    }
    same::<Role>(old, new)
        .or_else(|| same::<ClusterRole>(old, new))
        .or_else(|| same::<RoleBinding>(old, new))
        .or_else(|| same::<ClusterRoleBinding>(old, new))
        .unwrap_or(false)
}
