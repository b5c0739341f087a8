//! `apiregistration.k8s.io/v1`.

pub mod apiservice;

pub use apiservice::APIService;
