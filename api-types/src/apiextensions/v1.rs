//! `apiextensions.k8s.io/v1`.

pub mod customresourcedefinition;
pub mod json_schema;
mod stored;
mod structural;
mod validation;

pub use customresourcedefinition::CustomResourceDefinition;
pub use json_schema::{JSON, JSONSchemaProps};
