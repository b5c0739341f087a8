//! `apps/v1`.

pub mod controllerrevision;
pub mod daemonset;
pub mod deployment;
pub mod replicaset;
pub mod statefulset;
mod validation;

pub use controllerrevision::ControllerRevision;
pub use daemonset::DaemonSet;
pub use deployment::Deployment;
pub use replicaset::ReplicaSet;
pub use statefulset::StatefulSet;
