//! `scheduling.k8s.io/v1`.
