//! The `coordination.k8s.io` API group. Coordination: leases for leader election and heartbeats.

pub mod v1;
