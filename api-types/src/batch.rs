//! The `batch` API group. Batch workloads: run-to-completion Jobs and their schedules.

pub mod v1;
