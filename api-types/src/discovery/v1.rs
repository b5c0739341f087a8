//! `discovery.k8s.io/v1`.

pub mod endpointslice;

pub use endpointslice::EndpointSlice;
