//! The RBAC kinds' own rule beyond validation (upstream's policy-based
//! storage of `pkg/registry/rbac`): a user writes a Role or ClusterRole only
//! with rules they hold, or with the `escalate` verb on it; a RoleBinding or
//! ClusterRoleBinding only to a role whose rules they hold, or with the
//! `bind` verb on it. system:masters may do either.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

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
        let new = object.to_value().map_err(ApiError::internal)?;
        let namespace = scope.namespace.unwrap_or_default();
        let name = new["metadata"]["name"].as_str().unwrap_or_default();
        let info = scope.info();
        let verb = match self.kind {
            Kind::Role => "escalate",
            Kind::Binding => "bind",
        };
        // An update that changes only what the garbage collector changes
        // (owner references, finalizers) is not checked, as upstream's
        // IsOnlyMutatingGCFields; any other change is, labels too.
        if let Some(old) = old {
            let old = old.to_value().map_err(ApiError::internal)?;
            if without_gc_fields(&old) == without_gc_fields(&new) {
                return Ok(());
            }
        }
        let (group, resource, target_name) = match self.kind {
            Kind::Role => (info.group, info.plural, name),
            Kind::Binding => {
                let plural = if new["roleRef"]["kind"] == "Role" {
                    "roles"
                } else {
                    "clusterroles"
                };
                let role = new["roleRef"]["name"].as_str().unwrap_or_default();
                ("rbac.authorization.k8s.io", plural, role)
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
        let requested: Vec<PolicyRule> = match self.kind {
            Kind::Role => {
                if !new["aggregationRule"].is_null() {
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
                rules_of(&new["rules"])?
            }
            Kind::Binding => {
                let role = &new["roleRef"];
                let role_name = role["name"].as_str().unwrap_or_default();
                let (role_plural, role_namespace) = if role["kind"] == "Role" {
                    ("roles", Some(namespace))
                } else {
                    ("clusterroles", None)
                };
                let found = crate::loopback::Loopback::read(
                    registry,
                    ("rbac.authorization.k8s.io", "v1", role_plural),
                    role_namespace,
                    role_name,
                )
                .await?;
                // Upstream names the binding's resource with the role's name.
                let Some(found) = found else {
                    return Err(ApiError::not_found(crate::api_error::Target {
                        group: info.group,
                        resource: info.plural,
                        name: role_name,
                    }));
                };
                rules_of(&found["rules"])?
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

/// A role's rules; rules that do not read are an error, never "none" (which
/// would pass every check).
/// An object less what the garbage collector changes and what the server
/// keeps for itself (versions, ownership, times), for comparing two of its
/// versions.
fn without_gc_fields(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(meta) = object["metadata"].as_object_mut() {
        for field in [
            "ownerReferences",
            "finalizers",
            "resourceVersion",
            "managedFields",
            "generation",
            "creationTimestamp",
            "uid",
        ] {
            meta.remove(field);
        }
    }
    object
}

fn rules_of(value: &Value) -> ApiResult<Vec<PolicyRule>> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    serde_json::from_value(value.clone())
        .map_err(|e| ApiError::internal(format!("reading a role's rules: {e}")))
}
