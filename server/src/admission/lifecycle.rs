//! NamespaceLifecycle: nothing is created in a namespace that does not exist
//! (404 for the namespace) or that is being deleted (403 with the
//! `NamespaceTerminating` cause), as k8s.io/apiserver's lifecycle plugin.
//! Namespaces themselves, and the immortal ones' deletion, are handled by the
//! registry's namespace rules.

use kapi_runtime::meta::StatusCause;

use super::Attributes;
use crate::api_error::{ApiError, ApiResult, Target};
use crate::registry::{Registry, Scope};

/// Admits the create of an object in namespace `ns`.
pub async fn admit_create(registry: &Registry, attrs: &Attributes<'_>, ns: &str) -> ApiResult<()> {
    let Some(entry) = registry.scheme().get("", "v1", "namespaces").copied() else {
        // A server without namespaces has no namespace lifecycle to enforce.
        return Ok(());
    };
    let namespace = match registry.get(Scope::new(&entry, None), ns).await {
        Ok(namespace) => namespace,
        Err(e) if e.code() == 404 => {
            return Err(ApiError::not_found(Target {
                group: "",
                resource: "namespaces",
                name: ns,
            }));
        }
        Err(e) => return Err(e),
    };
    let terminating = namespace.metadata().deletion_timestamp.is_some()
        || namespace.field_text("status.phase").as_deref() == Some("Terminating");
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
