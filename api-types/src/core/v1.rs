//! `v1` of the core group: the kinds every cluster has.

pub mod configmap;
pub mod event;
pub mod namespace;
pub mod node;
pub mod pod;
pub mod reference;
pub mod secret;
pub mod service;
pub mod topology_selector_term;

pub use configmap::ConfigMap;
pub use event::Event;
pub use namespace::Namespace;
pub use node::Node;
pub use pod::Pod;
pub use secret::Secret;
pub use service::Service;
