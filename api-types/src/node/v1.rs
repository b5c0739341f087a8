//! `node.k8s.io/v1`.

pub mod runtimeclass;

pub use runtimeclass::RuntimeClass;
