//! The `certificates.k8s.io` API group. Certificates: certificate signing requests.

pub mod v1;
