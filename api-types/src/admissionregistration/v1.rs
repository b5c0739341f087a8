//! `admissionregistration.k8s.io/v1`.
