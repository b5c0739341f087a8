//! `node.k8s.io/v1`.

pub mod runtimeclass;
mod validation;
pub(crate) mod warnings;

pub use runtimeclass::RuntimeClass;
