//! `certificates.k8s.io/v1`.

pub mod certificatesigningrequest;
pub(crate) mod validation;

pub use certificatesigningrequest::CertificateSigningRequest;
