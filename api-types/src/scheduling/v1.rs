//! `scheduling.k8s.io/v1`.

pub mod priorityclass;
mod validation;

pub use priorityclass::PriorityClass;
