//! The checks of pkg/apis/coordination/validation for Leases. The
//! coordinated-leader-election fields (`strategy`, `preferredHolder`) belong
//! to a feature that is off in 1.32, and are not checked.

use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::lease::LeaseSpec;

/// The `LeaseSpec` hook.
pub(crate) fn validate_lease_spec(spec: &LeaseSpec, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(seconds) = spec.lease_duration_seconds
        && seconds <= 0
    {
        errs.invalid(
            path.child("leaseDurationSeconds"),
            seconds,
            "must be greater than 0",
        );
    }
    if let Some(transitions) = spec.lease_transitions
        && transitions < 0
    {
        errs.invalid(
            path.child("leaseTransitions"),
            transitions,
            "must be greater than or equal to 0",
        );
    }
}
