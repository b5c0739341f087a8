//! The `rbac.authorization.k8s.io` API group. Role-based access control: roles, cluster roles and their bindings.

pub mod v1;
