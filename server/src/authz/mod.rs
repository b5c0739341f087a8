//! Authorization: what a user may do, asked of every request after
//! authentication, as kube-apiserver's authorizers answer it.
//!
//! [`Attributes`] describe a request as upstream's authorizer.Attributes
//! (the verb, and the resource or the path); [`rbac`] evaluates the roles and
//! bindings of the rbac.authorization.k8s.io API.

pub mod authorizer;
pub mod bootstrap;
pub mod escalation;
pub mod node;
pub mod rbac;

pub use authorizer::{Authorizer, Mode};

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
