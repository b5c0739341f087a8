//! `apps/v1`.

mod claim_templates;
pub mod controllerrevision;
pub mod daemonset;
mod defaults;
pub mod deployment;
pub mod replicaset;
pub mod statefulset;
mod validation;
pub(crate) mod warnings;

pub use controllerrevision::ControllerRevision;
pub use daemonset::DaemonSet;
pub use deployment::Deployment;
pub use replicaset::ReplicaSet;
pub use statefulset::StatefulSet;
