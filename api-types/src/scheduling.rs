//! The `scheduling.k8s.io` API group. Scheduling: priority classes.

pub mod v1;
