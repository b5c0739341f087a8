//! The `networking.k8s.io` API group. Networking: ingress, ingress classes and network policies.

pub mod v1;
