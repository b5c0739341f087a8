//! `node.k8s.io/v1`.
