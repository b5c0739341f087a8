//! The `discovery.k8s.io` API group. Service discovery: endpoint slices.

pub mod v1;
