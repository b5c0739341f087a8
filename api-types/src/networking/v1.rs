//! `networking.k8s.io/v1`.
