//! `apiregistration.k8s.io/v1`.

pub mod apiservice;
mod validation;

pub use apiservice::APIService;
