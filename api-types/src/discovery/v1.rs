//! `discovery.k8s.io/v1`.

pub mod endpointslice;
mod validation;

pub use endpointslice::EndpointSlice;
