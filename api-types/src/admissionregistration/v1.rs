//! `admissionregistration.k8s.io/v1`.

mod defaults;
pub mod mutatingwebhookconfiguration;
pub mod rule;
pub mod validatingadmissionpolicy;
pub mod validatingadmissionpolicybinding;
pub mod validatingwebhookconfiguration;
mod validation;
pub mod webhook;

pub use mutatingwebhookconfiguration::MutatingWebhookConfiguration;
pub use validatingadmissionpolicy::ValidatingAdmissionPolicy;
pub use validatingadmissionpolicybinding::ValidatingAdmissionPolicyBinding;
pub use validatingwebhookconfiguration::ValidatingWebhookConfiguration;
