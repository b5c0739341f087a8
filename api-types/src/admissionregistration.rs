//! The `admissionregistration.k8s.io` API group. Admission registration: webhook configurations and validating admission policies.

pub mod v1;
