//! `flowcontrol.apiserver.k8s.io/v1`.

mod defaults;
pub mod flowschema;
pub mod prioritylevelconfiguration;
mod validation;

pub use flowschema::FlowSchema;
pub use prioritylevelconfiguration::PriorityLevelConfiguration;
