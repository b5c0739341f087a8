//! `coordination.k8s.io/v1`.

pub mod lease;
mod validation;

pub use lease::Lease;
