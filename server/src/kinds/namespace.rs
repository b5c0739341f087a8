//! The namespace lifecycle kube-apiserver implements itself: a DELETE marks the
//! namespace Terminating and leaves the emptying to the namespace controller,
//! which removes `kubernetes` from `spec.finalizers` through `/finalize` when it
//! is done; only then does the namespace go (on that update, or on the next
//! DELETE).

use jiff::Timestamp;
use kapi_api_types::core::v1::Namespace;
use kapi_runtime::meta::{DeleteOptions, Time};

use crate::api_error::{ApiError, ApiResult};
use crate::registry::hooks::{DeleteStep, KindRest};
use crate::registry::{FOREGROUND, ORPHAN, Object, Scope, write_gc_finalizers};

/// The phase of a namespace being emptied.
const TERMINATING: &str = "Terminating";

/// Namespaces Kubernetes refuses to delete.
const UNDELETABLE: &[&str] = &["default", "kube-system", "kube-public"];

/// The namespace lifecycle of the core `namespaces` resource.
pub struct NamespaceRest;

impl KindRest for NamespaceRest {
    fn refuse_delete(&self, scope: Scope<'_>, name: &str) -> ApiResult<()> {
        if UNDELETABLE.contains(&name) {
            return Err(ApiError::forbidden(
                scope.target(name),
                "this namespace may not be deleted",
            ));
        }
        Ok(())
    }

    fn delete_step(
        &self,
        scope: Scope<'_>,
        object: Object,
        options: &DeleteOptions,
    ) -> ApiResult<DeleteStep> {
        if object.metadata().deletion_timestamp.is_none() {
            let now = Time::now().0;
            return Ok(DeleteStep::Keep(mark_terminating(
                scope, object, options, now,
            )?));
        }
        // Until the namespace controller has emptied it, a namespace being
        // deleted stays as it is.
        if has_spec_finalizers(&object)? {
            return Ok(DeleteStep::Unchanged(object));
        }
        Ok(DeleteStep::Finish(object))
    }

    fn still_finalizing(&self, object: &Object) -> ApiResult<bool> {
        has_spec_finalizers(object)
    }
}

/// Whether components still have to clean the namespace up
/// (`spec.finalizers` is not empty).
fn has_spec_finalizers(object: &Object) -> ApiResult<bool> {
    let namespace = object
        .downcast_ref::<Namespace>()
        .ok_or_else(|| ApiError::internal("a namespace of another type"))?;
    Ok(namespace
        .spec
        .finalizers
        .as_ref()
        .is_some_and(|finalizers| !finalizers.is_empty()))
}

/// The first DELETE of a namespace: `deletionTimestamp` now, phase
/// Terminating, and the garbage collector's finalizers as the options ask
/// (namespaces have no default policy: the current finalizers stay unless the
/// options say otherwise).
fn mark_terminating(
    _scope: Scope<'_>,
    object: Object,
    options: &DeleteOptions,
    now: Timestamp,
) -> ApiResult<Object> {
    let mut object = object;
    let meta = object.metadata_mut();
    if meta.deletion_timestamp.is_none() {
        meta.deletion_timestamp = Some(Time(now));
    }
    // Namespaces have no default policy: the options decide, else the
    // finalizers it has (upstream's shouldHave*Finalizer).
    let has = |f: &str| meta.finalizers().iter().any(|c| c == f);
    let wanted = match (
        options.orphan_dependents,
        options.propagation_policy.as_deref(),
    ) {
        (Some(orphan), _) => (orphan, !orphan),
        (None, Some(policy)) => (policy == "Orphan", policy == "Foreground"),
        (None, None) => (has(ORPHAN), has(FOREGROUND)),
    };
    write_gc_finalizers(meta, wanted);
    let namespace = object
        .downcast_mut::<Namespace>()
        .ok_or_else(|| ApiError::internal("a namespace of another type"))?;
    namespace.status.phase = Some(TERMINATING.to_owned());
    Ok(object)
}
