//! `flowcontrol.apiserver.k8s.io/v1`.

mod defaults;
pub mod flowschema;
pub mod prioritylevelconfiguration;

pub use flowschema::FlowSchema;
pub use prioritylevelconfiguration::PriorityLevelConfiguration;
