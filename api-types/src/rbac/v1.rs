//! `rbac.authorization.k8s.io/v1`.

pub mod clusterrole;
pub mod clusterrolebinding;
mod defaults;
pub mod role;
pub mod rolebinding;
mod validation;

pub use clusterrole::ClusterRole;
pub use clusterrolebinding::ClusterRoleBinding;
pub use role::Role;
pub use rolebinding::RoleBinding;
