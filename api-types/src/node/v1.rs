//! `node.k8s.io/v1`.

pub mod runtimeclass;
mod validation;

pub use runtimeclass::RuntimeClass;
