//! The `policy` API group. Policies on workloads: disruption budgets and evictions.

pub mod v1;
