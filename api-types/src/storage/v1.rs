//! `storage.k8s.io/v1`.
