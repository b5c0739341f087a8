//! The `storage.k8s.io` API group. Storage: storage classes, CSI drivers and nodes, capacities and volume attachments.

pub mod v1;
