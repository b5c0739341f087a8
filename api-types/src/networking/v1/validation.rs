//! The checks of pkg/apis/networking/validation, one module per kind.

pub(super) mod ingress;
pub(super) mod ingressclass;
pub(super) mod networkpolicy;
