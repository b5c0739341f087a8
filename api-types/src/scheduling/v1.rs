//! `scheduling.k8s.io/v1`.

pub mod priorityclass;

pub use priorityclass::PriorityClass;
