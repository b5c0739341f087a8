//! `v1` of the core group: the kinds every cluster has.

pub mod configmap;
pub mod event;
pub mod namespace;
pub mod node;
pub mod persistent_volume;
pub mod persistent_volume_claim;
pub mod pod;
pub mod reference;
pub mod secret;
pub mod secret_reference;
pub mod service;

pub use configmap::ConfigMap;
pub use event::Event;
pub use namespace::Namespace;
pub use node::Node;
pub use persistent_volume::PersistentVolume;
pub use persistent_volume_claim::PersistentVolumeClaim;
pub use pod::Pod;
pub use secret::Secret;
pub use service::Service;
