//! The runtime half of kapi that generated code refers to: the apimachinery meta
//! types (with the exact Kubernetes JSON), the [`ApiType`] and [`Resource`] traits the
//! derives implement, declarative validation rules, and the [`scheme`] that collects
//! every annotated kind without a hand-written list.
//!
//! Like axum-core and kube-core this crate is small and free of HTTP and storage.

// The derives emit `::kapi_runtime::...` paths; this lets the meta types here use them.
extern crate self as kapi_runtime;

pub mod api_type;
pub mod bytes;
pub mod convert;
pub mod discovery;
pub mod erased;
pub mod field_text;
pub mod go_json;
pub mod intern;
pub mod intstr;
pub mod known_fields;
pub mod meta;
pub mod object;
pub mod openapi;
pub mod openapi_documents;
pub mod proto;
pub mod quantity;
pub mod resource;
pub mod resource_info;
pub mod scheme;
pub mod validation;

pub use api_type::ApiType;
pub use bytes::ByteString;
pub use convert::Convert;
pub use intstr::{IntOrString, Quantity};
pub use object::DynObject;
pub use resource::Resource;
pub use resource_info::{BodyKind, PrinterColumn, ResourceInfo, ScaleSubresource, Subresource};

/// Re-exported for the registration code the derive emits.
#[doc(hidden)]
pub use linkme;

/// Re-exported for the hooks the derive emits.
#[doc(hidden)]
pub use serde_json;
