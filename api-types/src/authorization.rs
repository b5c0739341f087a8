//! The `authorization.k8s.io` API group. Authorization: asking the server
//! whether a user, or the caller, may perform an action, and what the caller
//! may do in a namespace.

pub mod v1;
