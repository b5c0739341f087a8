//! `certificates.k8s.io/v1`.

pub mod certificatesigningrequest;
mod validation;

pub use certificatesigningrequest::CertificateSigningRequest;
