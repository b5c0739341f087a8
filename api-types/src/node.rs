//! The `node.k8s.io` API group. Node runtime: runtime classes.

pub mod v1;
