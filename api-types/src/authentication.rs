//! The `authentication.k8s.io` API group. Authentication: asking the server who
//! a bearer token or the caller is, and minting service account tokens.

pub mod v1;
