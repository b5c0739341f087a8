//! Admission, the generic part: one [`Chain`] of [`Plugin`]s every write
//! goes through (k8s.io/apiserver's `pkg/admission`). The plugins themselves
//! are given at start-up: Kubernetes' built-in ones live in
//! `crate::admission_plugins`; a library user adds their own.
//!
//! A create goes decode -> **judging** (the request alone) -> defaults ->
//! **mutating admission** -> PrepareForCreate -> validation -> **validating
//! admission** -> quota -> storage; an update runs the same phases on each
//! attempt of the registry's update loop, a delete only the judging one.
//! The mutating plugins may change the object or refuse it; the validating
//! ones only refuse. They read the objects they depend on through the
//! server's [`Loopback`](crate::loopback::Loopback), as upstream's plugins
//! read informers.

mod chain;
mod subject;

pub use chain::{
    Chain, Operation, Plugin, Quota, QuotaCharge, Reinvocation, Request, WebhookReinvocation,
};
#[cfg(test)]
pub(crate) use subject::json_forms_made;
pub use subject::{Subject, View};

use crate::api_error::{ApiError, Target};
use crate::scope::Scope;

/// What a plugin knows about the request besides the object.
#[derive(Clone)]
pub struct Attributes<'a> {
    /// The kind and namespace written.
    pub scope: Scope<'a>,
    /// The name errors give: the object's name, else its `generateName` (a
    /// create names nothing else yet).
    pub name: String,
    /// The namespace of the object (None for cluster-scoped kinds).
    pub namespace: Option<String>,
}

impl Attributes<'_> {
    /// 403 `<resource> "<name>" is forbidden: <why>` (admission.NewForbidden).
    pub fn forbidden(&self, why: &str) -> ApiError {
        let info = self.scope.info();
        ApiError::forbidden(
            Target {
                group: info.group,
                resource: info.plural,
                name: &self.name,
            },
            why,
        )
    }
}
