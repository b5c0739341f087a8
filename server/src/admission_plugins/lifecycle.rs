//! NamespaceLifecycle: nothing is created in a namespace that does not exist
//! (404 for the namespace) or that is being deleted (403 with the
//! `NamespaceTerminating` cause), as k8s.io/apiserver's lifecycle plugin.
//! Namespaces themselves, and the immortal ones' deletion, are handled by the
//! registry's namespace rules.

use kapi_api_types::core::v1::Namespace;
use kapi_runtime::meta::StatusCause;

use crate::admission::{Attributes, Operation, Plugin, Request};
use crate::api_error::{ApiError, ApiResult, Target};
use crate::loopback::{self, Loopback};
use async_trait::async_trait;

/// Admits the create of an object in namespace `ns`.
pub async fn admit_create(
    objects: &dyn Loopback,
    attrs: &Attributes<'_>,
    ns: &str,
) -> ApiResult<()> {
    if !loopback::serves::<Namespace>(objects) {
        // A server without namespaces has no namespace lifecycle to enforce.
        return Ok(());
    }
    let Some(namespace) = loopback::get::<Namespace>(objects, None, ns).await? else {
        return Err(ApiError::not_found(Target {
            group: "",
            resource: "namespaces",
            name: ns,
        }));
    };
    let terminating = namespace.metadata.deletion_timestamp.is_some()
        || namespace.status.phase.as_deref() == Some("Terminating");
    if !terminating {
        return Ok(());
    }
    let mut error = attrs.forbidden(&format!(
        "unable to create new content in namespace {ns} because it is being terminated"
    ));
    if let Some(details) = error.0.details.as_mut() {
        details
            .causes
            .get_or_insert_with(Vec::new)
            .push(StatusCause {
                reason: Some("NamespaceTerminating".to_owned()),
                message: Some(format!("namespace {ns} is being terminated")),
                field: Some("metadata.namespace".to_owned()),
            });
    }
    Err(error)
}

/// NamespaceLifecycle: nothing is created in a namespace that is missing or
/// being deleted.
pub struct NamespaceLifecycle;

#[async_trait]
impl Plugin for NamespaceLifecycle {
    fn name(&self) -> &'static str {
        "NamespaceLifecycle"
    }

    fn judges(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Create && request.attrs.namespace.is_some()
    }

    async fn judge(&self, request: &Request<'_>, objects: &dyn Loopback) -> ApiResult<()> {
        let ns = request.attrs.namespace.as_deref().unwrap_or_default();
        admit_create(objects, &request.attrs, ns).await
    }
}
