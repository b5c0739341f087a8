//! `apps/v1`.

pub mod deployment;
pub mod statefulset;

pub use deployment::Deployment;
pub use statefulset::StatefulSet;
