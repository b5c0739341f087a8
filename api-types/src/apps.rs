//! The `apps` API group: workload controllers.

pub mod v1;
