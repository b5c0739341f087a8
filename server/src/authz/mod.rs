//! Authorization, the generic part: what a request asks ([`Attributes`]),
//! what an authorizer answers ([`Decision`], and for the rules reviews
//! [`Rules`]), and the chain `--authorization-mode` names ([`Authorizer`]),
//! asked after authentication, as k8s.io/apiserver's union authorizer asks
//! its authorizers. Kubernetes' own authorizers (Node and RBAC) implement
//! [`Authorize`] in `crate::authorizers`.

pub mod authorizer;
pub mod webhook;

pub use authorizer::{AlwaysAllow, Authorize, Authorizer};

use crate::selectors::field::FieldSelector;
use crate::user::UserInfo;

/// What a request asks to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attributes<'a> {
    /// Who asks.
    pub user: &'a UserInfo,
    /// The verb: a resource verb (`get`, `list`, `create`...) or, for a
    /// path, the lower-cased HTTP method's verb (`get`, `post`...).
    pub verb: &'a str,
    /// A resource, or a path.
    pub target: Target<'a>,
}

/// What a request is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target<'a> {
    /// A resource of an API group.
    Resource {
        /// The namespace (empty: cluster scope, or every namespace).
        namespace: &'a str,
        /// The API group (`""` for core).
        group: &'a str,
        /// The resource (plural).
        resource: &'a str,
        /// The subresource, or `""`.
        subresource: &'a str,
        /// The object's name, or `""`.
        name: &'a str,
        /// A list or watch's field selector, when it has one (the Node
        /// authorizer lets a kubelet list only its own pods).
        fields: Option<&'a FieldSelector>,
    },
    /// A path that is no resource (`/healthz`, `/version`, `/apis`).
    Path(&'a str),
}

/// An authorizer's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Allowed, with the reason.
    Allow(String),
    /// Explicitly denied (later authorizers are not asked).
    Deny(String),
    /// No opinion: the next authorizer decides.
    NoOpinion(String),
}

/// One rule of what a user may do, as the rules reviews list them
/// (upstream's `authorizer.ResourceRuleInfo` and `NonResourceRuleInfo` in one):
/// a resource rule when it names resources, else a rule on paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rule {
    /// The verbs, or `*`.
    pub verbs: Vec<String>,
    /// The API groups, or `*`.
    pub api_groups: Vec<String>,
    /// The resources (`<resource>/<subresource>` for a subresource), or `*`.
    pub resources: Vec<String>,
    /// The names the rule is limited to (none: every name).
    pub resource_names: Vec<String>,
    /// The paths, or prefixes ending in `*`.
    pub non_resource_urls: Vec<String>,
}

/// What an authorizer can tell of a user's permissions in one namespace
/// (upstream's `RuleResolver.RulesFor`): everything, or a list of rules,
/// and why the list may be incomplete.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    /// The user may do everything (`*` on every group, resource and path).
    pub everything: bool,
    /// The rules that apply.
    pub rules: Vec<Rule>,
    /// Why the rules may be incomplete (a role that is missing, an
    /// authorizer whose permissions are no list of rules).
    pub errors: Vec<String>,
}
