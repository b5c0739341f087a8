//! Validation of the flowcontrol kinds, as pkg/apis/flowcontrol/validation
//! does it for v1 requests.

mod flowschema;
mod mandatory;
mod priority_level;

pub(crate) use flowschema::validate_flow_schema;
pub(crate) use priority_level::validate_priority_level;
