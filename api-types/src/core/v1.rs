//! `v1` of the core group: the kinds every cluster has.

pub mod binding;
pub mod componentstatus;
pub mod configmap;
pub mod endpoints;
pub mod event;
pub mod limitrange;
pub mod namespace;
pub mod node;
pub mod pod;
pub mod podtemplate;
pub mod reference;
pub mod replicationcontroller;
pub mod resourcequota;
pub mod secret;
pub mod service;
pub mod serviceaccount;

pub use binding::Binding;
pub use componentstatus::ComponentStatus;
pub use configmap::ConfigMap;
pub use endpoints::Endpoints;
pub use event::Event;
pub use limitrange::LimitRange;
pub use namespace::Namespace;
pub use node::Node;
pub use pod::Pod;
pub use podtemplate::PodTemplate;
pub use replicationcontroller::ReplicationController;
pub use resourcequota::ResourceQuota;
pub use secret::Secret;
pub use service::Service;
pub use serviceaccount::ServiceAccount;
