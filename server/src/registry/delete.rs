//! DELETE: preconditions, then graceful deletion or finalizers (the object stays
//! with a deletionTimestamp), else removal from storage.

use jiff::{SignedDuration, Timestamp};
use kapi_runtime::meta::{DeleteOptions, Time};
use kapi_storage::{KeyValue, StorageError, Update};

use super::{ListOptions, Object, Registry, Scope, decode, keys};
use crate::api_error::{ApiError, ApiResult};

/// Namespaces Kubernetes refuses to delete.
const UNDELETABLE_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];

/// What a delete did.
#[derive(Debug)]
pub enum Deleted {
    /// The object is gone; this was its last state.
    Gone(Object),
    /// The object stays (graceful deletion or finalizers) in this state.
    Pending(Object),
}

enum Decision {
    Remove(Object),
    Keep(Object),
}

impl Registry {
    /// Deletes one object as DeleteOptions ask.
    pub async fn delete(
        &self,
        scope: Scope<'_>,
        name: &str,
        options: &DeleteOptions,
    ) -> ApiResult<Deleted> {
        let info = scope.info();
        if info.group.is_empty()
            && info.plural == "namespaces"
            && UNDELETABLE_NAMESPACES.contains(&name)
        {
            return Err(ApiError::forbidden(
                scope.target(name),
                "this namespace may not be deleted",
            ));
        }
        self.admit_delete(scope, name)?;
        let dry_run = options
            .dry_run
            .as_ref()
            .is_some_and(|d| d.iter().any(|v| v == "All"));
        let key = scope.key(name);
        let media_type = self.media_type;
        let mut failure = None;
        let mut decision = None;
        let outcome = self
            .storage
            .guaranteed_update(
                &key,
                &mut |current| match decide(scope, name, current, options) {
                    Ok(d) => {
                        let mut d = d;
                        let update = match &mut d {
                            _ if dry_run => Ok(Update::Keep),
                            Decision::Remove(_) => Ok(Update::Delete),
                            Decision::Keep(obj) => media_type
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
                },
            )
            .await;
        if let Some(e) = failure {
            return Err(e);
        }
        let kv = outcome.map_err(|e| ApiError::from_storage(e, scope.target(name)))?;
        match decision {
            None => Err(ApiError::not_found(scope.target(name))),
            Some(Decision::Remove(object)) => {
                if !dry_run && info.group.is_empty() && info.plural == "namespaces" {
                    Box::pin(self.purge_namespace(name)).await?;
                }
                Ok(Deleted::Gone(scope.to_served(object)?))
            }
            Some(Decision::Keep(object)) if dry_run => {
                Ok(Deleted::Pending(scope.to_served(object)?))
            }
            Some(Decision::Keep(_)) => match kv {
                Some(kv) => Ok(Deleted::Pending(
                    scope.to_served(decode(scope.entry, &kv)?)?,
                )),
                None => Err(ApiError::not_found(scope.target(name))),
            },
        }
    }

    /// DELETECOLLECTION: deletes every object the list options select; returns
    /// what was deleted or marked for deletion.
    pub async fn delete_collection(
        &self,
        scope: Scope<'_>,
        list: ListOptions,
        options: &DeleteOptions,
    ) -> ApiResult<Vec<Object>> {
        let page = self.list(scope, list).await?;
        let mut deleted = Vec::with_capacity(page.items.len());
        for item in page.items {
            let item_scope = Scope {
                namespace: item.metadata().namespace.as_deref(),
                ..scope
            };
            match self
                .delete(item_scope, item.metadata().name(), options)
                .await
            {
                Ok(Deleted::Gone(o) | Deleted::Pending(o)) => deleted.push(o),
                Err(e) if e.code() == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(deleted)
    }

    /// The namespace controller's work, done synchronously: everything in a
    /// deleted namespace is deleted with it.
    async fn purge_namespace(&self, namespace: &str) -> ApiResult<()> {
        let options = DeleteOptions::default();
        let entries: Vec<_> = self
            .scheme
            .entries()
            // Each kind once, in its storage version.
            .filter(|e| e.info.namespaced && e.hub.is_none())
            .copied()
            .collect();
        for entry in &entries {
            let scope = Scope::new(entry, Some(namespace));
            let prefix = keys::prefix(entry.info, Some(namespace));
            let listed = self
                .storage
                .list(&prefix, kapi_storage::ListOptions::default())
                .await;
            let kvs = listed
                .map_err(|e| ApiError::from_storage(e, scope.target("")))?
                .items;
            for kv in kvs {
                let object = decode(entry, &kv)?;
                match self.delete(scope, object.metadata().name(), &options).await {
                    Ok(_) => {}
                    Err(e) if e.code() == 404 => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }
}

fn decide(
    scope: Scope<'_>,
    name: &str,
    current: Option<&KeyValue>,
    options: &DeleteOptions,
) -> ApiResult<Decision> {
    let current = current.ok_or_else(|| ApiError::not_found(scope.target(name)))?;
    let mut object = decode(scope.entry, current)?;
    check_preconditions(scope, name, &object, options)?;
    add_propagation_finalizer(&mut object, options);
    let grace = object
        .typed()
        .deletion_grace_period(options.grace_period_seconds);
    let meta = object.metadata_mut();
    match grace {
        Some(seconds) if seconds > 0 => {
            // Graceful deletion: only ever shortened by a later delete.
            if meta
                .deletion_grace_period_seconds
                .is_some_and(|current| current <= seconds)
            {
                return Ok(Decision::Keep(object));
            }
            meta.deletion_timestamp = Some(Time(after(seconds)));
            meta.deletion_grace_period_seconds = Some(seconds);
            Ok(Decision::Keep(object))
        }
        _ if !meta.finalizers().is_empty() => {
            if meta.deletion_timestamp.is_none() {
                meta.deletion_timestamp = Some(Time::now());
            }
            meta.deletion_grace_period_seconds = Some(0);
            Ok(Decision::Keep(object))
        }
        _ => Ok(Decision::Remove(object)),
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

/// `propagationPolicy: Orphan|Foreground` hand the object to the garbage
/// collector through the `orphan` / `foregroundDeletion` finalizers, as upstream.
fn add_propagation_finalizer(object: &mut Object, options: &DeleteOptions) {
    let finalizer = match (
        options.propagation_policy.as_deref(),
        options.orphan_dependents,
    ) {
        (Some("Foreground"), _) => "foregroundDeletion",
        (Some("Orphan"), _) | (None, Some(true)) => "orphan",
        _ => return,
    };
    let finalizers = object
        .metadata_mut()
        .finalizers
        .get_or_insert_with(Vec::new);
    if !finalizers.iter().any(|f| f == finalizer) {
        finalizers.push(finalizer.to_owned());
    }
}
