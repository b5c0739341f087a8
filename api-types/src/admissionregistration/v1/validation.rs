//! The checks of pkg/apis/admissionregistration/validation, one module per
//! kind (the two webhook kinds share one), with the rules they share and the
//! webhook URL parser beside them. CEL expressions are not compiled.

pub(super) mod binding;
pub(super) mod policy;
mod rules;
mod url;
pub(super) mod webhook;
