//! Kubernetes' own authorizers, the modes `--authorization-mode` names
//! besides `AlwaysAllow`: [`node`] (what kubelets may reach, upstream's
//! `plugin/pkg/auth/authorizer/node`) and [`rbac`] (the roles and bindings
//! of rbac.authorization.k8s.io), with RBAC's [`bootstrap`] policy and the
//! [`escalation`] checks of role writes. Each implements the generic
//! [`Authorize`] of `crate::authz`; [`chain`] assembles them in the order
//! given.

pub mod bootstrap;
pub mod escalation;
pub mod node;
pub mod rbac;

use std::sync::Arc;

use crate::authz::{AlwaysAllow, Authorize, Authorizer};
use node::NodeAuthorizer;
use rbac::RbacAuthorizer;

/// An authorization mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Everyone may do everything.
    AlwaysAllow,
    /// The roles and bindings of rbac.authorization.k8s.io.
    Rbac,
    /// What kubelets may do: their own node's objects.
    Node,
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(text: &str) -> Result<Mode, String> {
        match text {
            "AlwaysAllow" => Ok(Mode::AlwaysAllow),
            "RBAC" => Ok(Mode::Rbac),
            "Node" => Ok(Mode::Node),
            other => Err(format!(
                "unknown authorization mode {other:?} (supported: AlwaysAllow, Node, RBAC)"
            )),
        }
    }
}

/// The authorizers of `modes`, in that order; `rbac` is the RBAC
/// authorizer to use for [`Mode::Rbac`] (shared with the escalation checks
/// of role writes, which read its policy whatever the modes).
pub fn chain(modes: &[Mode], rbac: &Arc<RbacAuthorizer>) -> Authorizer {
    let chain = modes
        .iter()
        .map(|mode| -> Arc<dyn Authorize> {
            match mode {
                Mode::AlwaysAllow => Arc::new(AlwaysAllow),
                Mode::Rbac => rbac.clone(),
                Mode::Node => Arc::new(NodeAuthorizer::default()),
            }
        })
        .collect();
    Authorizer::new(chain)
}
