//! DELETE: preconditions, then graceful deletion or finalizers (the object stays
//! with a deletionTimestamp), else removal from storage.

use jiff::{SignedDuration, Timestamp};
use kapi_runtime::meta::{DeleteOptions, ObjectMeta, Time};
use kapi_storage::{KeyValue, StorageError, Update};

use super::hooks::{DeleteStep, KindRest};
use super::{ListOptions, Object, Registry, Scope, decode};
use crate::admission;
use crate::api_error::{ApiError, ApiResult};
use crate::options::WriteOptions;
use crate::selectors::Selectable;

/// What a delete did.
#[derive(Debug)]
pub enum Deleted {
    /// The object is gone; this was its last state.
    Gone(Object),
    /// The object stays (graceful deletion or finalizers) in this state.
    Pending(Object),
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
        let key = super::key(scope, name);
        let media_type = self.store.media_type();
        let mut failure = None;
        let mut decision = None;
        let outcome = self
            .store
            .backend()
            .guaranteed_update(&key, &mut |current| match decide(
                scope, rest, name, current, options,
            ) {
                Ok(d) => {
                    let mut d = d;
                    let update = match &mut d {
                        _ if dry_run => Ok(Update::Keep),
                        Decision::Remove(_) => Ok(Update::Delete),
                        Decision::Unchanged(_) => Ok(Update::Keep),
                        Decision::Keep(obj) | Decision::MarkThenRemove(obj) => media_type
                            .encode(scope.entry, obj)
                            .map(Update::Write)
                            .map_err(StorageError::Internal),
                    };
                    decision = Some(d);
                    update
                }
                Err(e) => {
                    failure = Some(e);
                    Err(StorageError::Internal("aborted".into()))
                }
            })
            .await;
        if let Some(e) = failure {
            return Err(e);
        }
        let kv = outcome.map_err(|e| ApiError::from_storage(e, scope.target(name)))?;
        match decision {
            None => Err(ApiError::not_found(scope.target(name))),
            Some(Decision::Remove(object)) => {
                if !dry_run && let Some(rest) = rest {
                    rest.after_delete(self.store.backend().as_ref(), scope, &object)
                        .await;
                }
                Ok(Deleted::Gone(scope.to_served(object)?))
            }
            Some(Decision::MarkThenRemove(object)) if dry_run => {
                Ok(Deleted::Gone(scope.to_served(object)?))
            }
            Some(Decision::MarkThenRemove(mut object)) => {
                let Some(kv) = kv else {
                    return Err(ApiError::not_found(scope.target(name)));
                };
                object.metadata_mut().resource_version = Some(kv.mod_revision.to_string());
                // No finalizer can be added once the deletion is marked, so
                // the object goes whatever changed since; but only this one,
                // not one made again under its name meanwhile.
                let uid = object.metadata().uid.clone();
                let removed = self
                    .store
                    .backend()
                    .guaranteed_update(&key, &mut |current| {
                        let same = current
                            .and_then(|kv| decode(scope.entry, kv).ok())
                            .is_some_and(|o| o.metadata().uid == uid);
                        Ok(if same { Update::Delete } else { Update::Keep })
                    })
                    .await;
                match removed {
                    Ok(_) | Err(StorageError::NotFound(_)) => {}
                    Err(e) => return Err(ApiError::from_storage(e, scope.target(name))),
                }
                if let Some(rest) = rest {
                    rest.after_delete(self.store.backend().as_ref(), scope, &object)
                        .await;
                }
                Ok(Deleted::Gone(scope.to_served(object)?))
            }
            Some(Decision::Keep(object) | Decision::Unchanged(object)) if dry_run => {
                Ok(Deleted::Pending(scope.to_served(object)?))
            }
            Some(Decision::Keep(_) | Decision::Unchanged(_)) => match kv {
                Some(kv) => Ok(Deleted::Pending(
                    scope.to_served(decode(scope.entry, &kv)?)?,
                )),
                None => Err(ApiError::not_found(scope.target(name))),
            },
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
    current: Option<&KeyValue>,
    options: &DeleteOptions,
) -> ApiResult<Decision> {
    let current = current.ok_or_else(|| ApiError::not_found(scope.target(name)))?;
    let mut object = decode(scope.entry, current)?;
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
