//! What the built-in kinds do beyond the common strategy, each in its own
//! module behind the registry's hooks (upstream's per-kind storage under
//! `pkg/registry/<group>/<kind>`): Service addresses, the namespace
//! lifecycle, the deletion of CustomResourceDefinitions, ComponentStatus probes, the warning about a Job's pods, binding and evicting pods, service
//! account tokens, the authentication reviews. [`builtin`] assembles them for the registry at start-up.

pub mod apiservice;
pub mod authentication;
pub mod authorization;
pub mod certificates;
pub mod cluster_authentication;
pub mod component_status;
pub mod crd;
pub mod identity_lease;
pub mod job;
pub mod master_endpoints;
pub mod namespace;
pub mod pod;
pub mod rbac;
pub mod service;
pub mod service_account;
pub mod webhook_configuration;

use std::sync::Arc;

use crate::authn::Authenticator;
use crate::authn::service_account::Issuer;
use crate::authorizers::rbac::RbacAuthorizer;
use crate::authz::Authorizer;
use crate::registry::Hooks;
use crate::stored::StorageMediaType;

pub use service::{IpRange, Repair as ServiceRepair, SERVICE_RANGE_KEYS, ServiceRanges};

/// Who answers the reviews and signs service account tokens.
#[derive(Clone, Default)]
pub struct Security {
    /// Answers the authentication reviews.
    pub authenticator: Arc<Authenticator>,
    /// Answers the authorization reviews.
    pub authorizer: Arc<Authorizer>,
    /// The RBAC policy role writes are checked against (whatever the
    /// authorization modes).
    pub rbac: Arc<RbacAuthorizer>,
    /// Issues service account tokens.
    pub issuer: Arc<Issuer>,
}

/// The hooks of the built-in kinds, Services taking addresses and ports
/// from `ranges` (their bitmaps stored in `media_type`, as Services), the
/// reviews and service account tokens as `security`.
pub fn builtin(ranges: ServiceRanges, media_type: StorageMediaType, security: Security) -> Hooks {
    let Security {
        authenticator,
        authorizer,
        rbac,
        issuer,
    } = security;
    let bind = Arc::new(pod::binding::Bind);
    let access = |review| authorization::AccessReviewRest {
        review,
        authorizer: authorizer.clone(),
    };
    let group = "authorization.k8s.io";
    let rbac = |kind| rbac::RbacRest {
        kind,
        authorizer: authorizer.clone(),
        rbac: rbac.clone(),
    };
    let rbac_group = "rbac.authorization.k8s.io";
    Hooks::new()
        .with_rest(
            ("certificates.k8s.io", "certificatesigningrequests"),
            certificates::CsrRest,
        )
        .with_rest((rbac_group, "roles"), rbac(rbac::Kind::Role))
        .with_rest((rbac_group, "clusterroles"), rbac(rbac::Kind::Role))
        .with_rest((rbac_group, "rolebindings"), rbac(rbac::Kind::Binding))
        .with_rest(
            (rbac_group, "clusterrolebindings"),
            rbac(rbac::Kind::Binding),
        )
        .with_rest(
            (group, "subjectaccessreviews"),
            access(authorization::Review::Subject),
        )
        .with_rest(
            (group, "localsubjectaccessreviews"),
            access(authorization::Review::Local),
        )
        .with_rest(
            (group, "selfsubjectaccessreviews"),
            access(authorization::Review::SelfSubject),
        )
        .with_rest(
            (group, "selfsubjectrulesreviews"),
            authorization::RulesReviewRest {
                authorizer: authorizer.clone(),
            },
        )
        .with_rest(
            ("authentication.k8s.io", "selfsubjectreviews"),
            authentication::SelfSubjectReviewRest,
        )
        .with_rest(
            ("authentication.k8s.io", "tokenreviews"),
            authentication::TokenReviewRest { authenticator },
        )
        .with_rest(
            ("", "services"),
            service::ServiceRest::new(ranges, media_type),
        )
        .with_rest(("", "namespaces"), namespace::NamespaceRest)
        .with_rest(("batch", "jobs"), job::JobRest)
        .with_rest(
            (
                "admissionregistration.k8s.io",
                "mutatingwebhookconfigurations",
            ),
            webhook_configuration::WebhookConfigurationRest,
        )
        .with_rest(
            (
                "admissionregistration.k8s.io",
                "validatingwebhookconfigurations",
            ),
            webhook_configuration::WebhookConfigurationRest,
        )
        .with_rest(
            (
                "admissionregistration.k8s.io",
                "validatingadmissionpolicies",
            ),
            webhook_configuration::PolicyRest,
        )
        .with_rest(
            ("apiextensions.k8s.io", "customresourcedefinitions"),
            crd::CrdRest,
        )
        .with_rest(
            ("apiregistration.k8s.io", "apiservices"),
            apiservice::ApiServiceRest,
        )
        .with_rest(
            ("", "componentstatuses"),
            component_status::ComponentStatusRest,
        )
        .with_action(("", "bindings", ""), bind.clone())
        .with_action(("", "pods", "binding"), bind)
        .with_action(("", "pods", "eviction"), Arc::new(pod::eviction::Evict))
        .with_action(
            ("", "serviceaccounts", "token"),
            Arc::new(service_account::token::IssueToken { issuer }),
        )
}
