//! `rbac.authorization.k8s.io/v1`.
