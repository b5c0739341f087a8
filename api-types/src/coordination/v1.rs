//! `coordination.k8s.io/v1`.

pub mod lease;

pub use lease::Lease;
