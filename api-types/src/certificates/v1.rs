//! `certificates.k8s.io/v1`.

pub mod certificatesigningrequest;

pub use certificatesigningrequest::CertificateSigningRequest;
