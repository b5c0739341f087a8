//! The checks of pkg/apis/core/validation for the core kinds other than pods
//! (those are in `pod/validation.rs`): what the field rules cannot say.

mod service;

pub(crate) use service::{validate_service_spec, validate_service_update};
