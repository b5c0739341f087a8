//! DELETE: preconditions, then graceful deletion or finalizers (the object stays
//! with a deletionTimestamp), else removal from storage.

use jiff::{SignedDuration, Timestamp};
use kapi_runtime::meta::{DeleteOptions, ObjectMeta, Time};

use super::hooks::{DeleteStep, KindRest};
use super::{ListOptions, Object, Registry, Scope};
use crate::admission;
use crate::api_error::{ApiError, ApiResult};
use crate::options::WriteOptions;
use crate::selectors::Selectable;
use crate::store::{Change, Outcome};

/// What a delete did.
#[derive(Debug)]
pub enum Deleted {
    /// The object is gone; this was its last state.
    Gone(Object),
    /// The object stays (graceful deletion or finalizers) in this state.
    Pending(Object),
}

/// What a delete decided, as the store's change and what is left of it to
/// answer with.
enum Decided {
    /// Nothing was written: the whole decision.
    DryRun(Decision),
    Remove(Object),
    Keep,
    Unchanged,
    MarkThenRemove,
}

enum Decision {
    /// Remove it from storage.
    Remove(Object),
    /// Write it back (marked for deletion).
    Keep(Object),
    /// Leave it as stored (a namespace still being emptied).
    Unchanged(Object),
    /// Write it marked for deletion with no grace period left, then remove
    /// it: watchers see MODIFIED and DELETED, as upstream's graceful deletion
    /// of a pod with nothing left to wait for (unscheduled, or confirmed by
    /// its kubelet).
    MarkThenRemove(Object),
}

impl Decision {
    /// The store's change for the decision, and what is left to answer with.
    fn split(self) -> (Change, Decided) {
        match self {
            Decision::Remove(object) => (Change::Delete, Decided::Remove(object)),
            Decision::Keep(object) => (Change::Write(object), Decided::Keep),
            Decision::Unchanged(_) => (Change::Keep, Decided::Unchanged),
            Decision::MarkThenRemove(object) => (Change::Write(object), Decided::MarkThenRemove),
        }
    }
}

impl Registry {
    /// Deletes one object as DeleteOptions ask.
    pub async fn delete(
        &self,
        scope: Scope<'_>,
        name: &str,
        options: &DeleteOptions,
        opts: &WriteOptions<'_>,
    ) -> ApiResult<Deleted> {
        let rest = self.hooks.rest(scope.info());
        if let Some(rest) = rest {
            rest.refuse_delete(scope, name)?;
        }
        let request = admission::Request::delete(scope, name, options, opts);
        self.admission.judge(&request, self).await?;
        // Upstream admits a delete against the stored object, read before
        // the delete is decided.
        if self.admission.selects_request(&request, self).await? {
            let stored = self.store.get(scope, name).await?;
            let old = stored.object().map_err(ApiError::internal)?;
            self.admission.admit_delete(&request, &old, self).await?;
        }
        let dry_run = request.dry_run;
        let mut decided = None;
        let outcome = self
            .store
            .guaranteed_update(scope, name, &mut |current| {
                let decision = decide(scope, rest, name, current, options)?;
                if dry_run {
                    decided = Some(Decided::DryRun(decision));
                    return Ok(Change::Keep);
                }
                let (change, left) = decision.split();
                decided = Some(left);
                Ok(change)
            })
            .await?;
        let storage = self.store.backend().as_ref();
        match (decided, outcome) {
            (None, _) => Err(ApiError::not_found(scope.target(name))),
            (Some(Decided::DryRun(Decision::Remove(o) | Decision::MarkThenRemove(o))), _) => {
                Ok(Deleted::Gone(scope.to_served(o)?))
            }
            (Some(Decided::DryRun(Decision::Keep(o) | Decision::Unchanged(o))), _) => {
                Ok(Deleted::Pending(scope.to_served(o)?))
            }
            (Some(Decided::Remove(object)), _) => {
                if let Some(rest) = rest {
                    rest.after_delete(storage, scope, &object).await;
                }
                Ok(Deleted::Gone(scope.to_served(object)?))
            }
            (Some(Decided::MarkThenRemove), Outcome::Written(marked)) => {
                let object = marked.into_object().map_err(ApiError::internal)?;
                // No finalizer can be added once the deletion is marked, so
                // the object goes whatever changed since; but only this one,
                // not one made again under its name meanwhile.
                let uid = object.metadata().uid.clone();
                let removed = self
                    .store
                    .guaranteed_update(scope, name, &mut |current| {
                        let same = current.is_some_and(|o| o.metadata().uid == uid);
                        Ok(if same { Change::Delete } else { Change::Keep })
                    })
                    .await;
                match removed {
                    Ok(_) => {}
                    Err(e) if e.code() == 404 => {}
                    Err(e) => return Err(e),
                }
                if let Some(rest) = rest {
                    rest.after_delete(storage, scope, &object).await;
                }
                Ok(Deleted::Gone(scope.to_served(object)?))
            }
            (Some(Decided::Keep | Decided::Unchanged), Outcome::Written(kept)) => {
                let object = kept.into_object().map_err(ApiError::internal)?;
                Ok(Deleted::Pending(scope.to_served(object)?))
            }
            (Some(Decided::Keep | Decided::Unchanged), Outcome::Kept(current)) => Ok(
                Deleted::Pending(scope.to_served(current.object(scope.entry)?)?),
            ),
            (Some(_), _) => Err(ApiError::not_found(scope.target(name))),
        }
    }

    /// DELETECOLLECTION: deletes every object the list options select; returns
    /// the revision the list was read at and what was deleted or marked for
    /// deletion.
    pub async fn delete_collection(
        &self,
        scope: Scope<'_>,
        list: ListOptions,
        options: &DeleteOptions,
        opts: &WriteOptions<'_>,
    ) -> ApiResult<(u64, Vec<Object>)> {
        let page = self.list(scope, list).await?;
        let mut deleted = Vec::with_capacity(page.items.len());
        for item in page.items {
            // Read without decoding what the store keeps encoded.
            let namespace = item.field_text("metadata.namespace");
            let name = item.field_text("metadata.name").unwrap_or_default();
            let item_scope = Scope {
                namespace: namespace.as_deref(),
                ..scope
            };
            match self.delete(item_scope, &name, options, opts).await {
                Ok(Deleted::Gone(o) | Deleted::Pending(o)) => deleted.push(o),
                Err(e) if e.code() == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok((page.revision, deleted))
    }
}

fn decide(
    scope: Scope<'_>,
    rest: Option<&dyn KindRest>,
    name: &str,
    current: Option<Object>,
    options: &DeleteOptions,
) -> ApiResult<Decision> {
    let mut object = current.ok_or_else(|| ApiError::not_found(scope.target(name)))?;
    check_preconditions(scope, name, &object, options)?;
    if let Some(rest) = rest {
        object = match rest.delete_step(scope, object, options)? {
            DeleteStep::Common(mut object) => {
                set_gc_finalizers(scope, &mut object, options);
                object
            }
            DeleteStep::Finish(object) => object,
            DeleteStep::Keep(object) => return Ok(Decision::Keep(object)),
            DeleteStep::Unchanged(object) => return Ok(Decision::Unchanged(object)),
        };
    } else {
        set_gc_finalizers(scope, &mut object, options);
    }
    let grace = object
        .typed()
        .deletion_grace_period(options.grace_period_seconds);
    let meta = object.metadata_mut();
    match grace {
        Some(seconds) => {
            match (meta.deletion_timestamp, meta.deletion_grace_period_seconds) {
                // Marked with no time left: it goes (once its finalizers are done).
                (Some(_), None | Some(0)) if meta.finalizers().is_empty() => {
                    return Ok(Decision::Remove(object));
                }
                (Some(_), None | Some(0)) => return Ok(Decision::Keep(object)),
                // Graceful deletion is only ever shortened by a later delete,
                // counted from when it was asked for.
                (Some(_), Some(current)) if seconds >= current => {
                    return Ok(Decision::Keep(object));
                }
                (Some(at), Some(current)) => {
                    let asked = at.0.checked_sub(SignedDuration::from_secs(current));
                    let due = asked.and_then(|t| t.checked_add(SignedDuration::from_secs(seconds)));
                    meta.deletion_timestamp = Some(Time(due.unwrap_or(at.0)));
                }
                (None, _) => {
                    bump_generation_once(meta);
                    meta.deletion_timestamp = Some(Time(after(seconds)));
                }
            }
            meta.deletion_grace_period_seconds = Some(seconds);
            // No time left: marked, then removed (watchers see both).
            if seconds == 0 && meta.finalizers().is_empty() {
                Ok(Decision::MarkThenRemove(object))
            } else {
                Ok(Decision::Keep(object))
            }
        }
        _ if !meta.finalizers().is_empty() => {
            bump_generation_once(meta);
            if meta.deletion_timestamp.is_none() {
                meta.deletion_timestamp = Some(Time::now());
            }
            meta.deletion_grace_period_seconds = Some(0);
            Ok(Decision::Keep(object))
        }
        _ => Ok(Decision::Remove(object)),
    }
}

/// The first deletion request counts as a change of a kind that tracks
/// generations (upstream's markAsDeleting and BeforeDelete).
fn bump_generation_once(meta: &mut ObjectMeta) {
    if meta.deletion_timestamp.is_none()
        && let Some(generation) = meta.generation.filter(|g| *g > 0)
    {
        meta.generation = Some(generation + 1);
    }
}

fn after(seconds: i64) -> Timestamp {
    let now = Time::now().0;
    now.checked_add(SignedDuration::from_secs(seconds))
        .unwrap_or(now)
}

fn check_preconditions(
    scope: Scope<'_>,
    name: &str,
    object: &Object,
    options: &DeleteOptions,
) -> ApiResult<()> {
    let Some(pre) = &options.preconditions else {
        return Ok(());
    };
    if let Some(uid) = &pre.uid
        && object.metadata().uid.as_ref() != Some(uid)
    {
        let why = format!(
            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
            object.metadata().uid.as_deref().unwrap_or_default()
        );
        return Err(ApiError::conflict(scope.target(name), &why));
    }
    if let Some(rv) = &pre.resource_version
        && object.metadata().resource_version.as_ref() != Some(rv)
    {
        let why = format!(
            "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
            object
                .metadata()
                .resource_version
                .as_deref()
                .unwrap_or_default()
        );
        return Err(ApiError::conflict(scope.target(name), &why));
    }
    Ok(())
}

/// The garbage collector's finalizer: orphan the dependents first.
pub const ORPHAN: &str = "orphan";
/// The garbage collector's finalizer: delete the dependents first.
pub const FOREGROUND: &str = "foregroundDeletion";

/// Hands the object to the garbage collector as upstream's
/// deletionFinalizersForGarbageCollection does: `orphan` or
/// `foregroundDeletion` as the options ask, else as the object's finalizers
/// already say, else as the kind's default policy (orphaning for
/// ReplicationControllers and Jobs, background deletion otherwise).
fn set_gc_finalizers(scope: Scope<'_>, object: &mut Object, options: &DeleteOptions) {
    let meta = object.metadata_mut();
    let has = |f: &str| meta.finalizers().iter().any(|c| c == f);
    let wanted = match (
        options.orphan_dependents,
        options.propagation_policy.as_deref(),
    ) {
        (Some(orphan), _) => (orphan, false),
        (None, Some(policy)) => (policy == "Orphan", policy == "Foreground"),
        (None, None) if has(ORPHAN) => (true, false),
        (None, None) if has(FOREGROUND) => (false, true),
        (None, None) => (scope.served.info.orphan_dependents, false),
    };
    write_gc_finalizers(meta, wanted);
}

/// Makes the object carry exactly the garbage collector's finalizers asked
/// for, `(orphan, foreground)`, keeping every other finalizer.
pub fn write_gc_finalizers(meta: &mut ObjectMeta, (orphan, foreground): (bool, bool)) {
    let has = |f: &str| meta.finalizers().iter().any(|c| c == f);
    if orphan == has(ORPHAN) && foreground == has(FOREGROUND) {
        return;
    }
    let mut finalizers: Vec<String> = meta
        .finalizers()
        .iter()
        .filter(|f| *f != ORPHAN && *f != FOREGROUND)
        .cloned()
        .collect();
    if orphan {
        finalizers.push(ORPHAN.to_owned());
    }
    if foreground {
        finalizers.push(FOREGROUND.to_owned());
    }
    meta.finalizers = Some(finalizers);
}
