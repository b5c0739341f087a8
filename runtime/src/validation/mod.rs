//! Field paths and field errors (k8s.io/apimachinery/pkg/util/validation/field),
//! the format checks Kubernetes uses for names and labels, and the declarative
//! rules `#[derive(ApiType)]` calls.

mod errors;
mod formats;
pub mod rules;

pub use errors::{FieldError, FieldErrorKind, FieldErrors, FieldPath};
pub use formats::{
    c_identifier_errors, config_key_errors, dns1035_label_errors, dns1123_label_errors,
    dns1123_subdomain_errors, env_var_name_errors, inclusive_range_error, is_percent,
    label_value_errors, path_segment_errors, port_name_errors, port_number_errors,
    qualified_name_errors,
};
