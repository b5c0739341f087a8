//! The write side of the store: create, update, delete and guaranteed
//! update, each encoding the object once for the backend (the store owns
//! the codec) and handing the object written to the resource's cache, whose
//! event of the write then takes it instead of decoding the stored bytes.
//! The object a write answers with is that same one: its JSON is written
//! once, for the answer and the cache's copy alike.

use std::sync::Arc;

use kapi_runtime::scheme::KindEntry;
use kapi_storage::{StorageError, Update};

use super::{Cached, CachedStore, Current, decode};
use crate::api_error::{ApiError, ApiResult};
use crate::body::Object;
use crate::cache::Writing;
use crate::scope::Scope;
use crate::stored::keys;

/// What a guaranteed update's change decided.
pub enum Change {
    /// Leave the object as it is.
    Keep,
    /// Remove it.
    Delete,
    /// Write this (in the storage version).
    Write(Object),
}

/// What a guaranteed update left at the key.
pub enum Outcome {
    /// Nothing: it was deleted.
    Gone,
    /// The object as it was (the change kept it).
    Kept(Current),
    /// The object written, its resourceVersion stamped.
    Written(Arc<Cached>),
}

impl CachedStore {
    /// Creates `object` (in the storage version) as `name` in `scope`;
    /// answers it with its resourceVersion.
    pub async fn create(
        &self,
        scope: Scope<'_>,
        name: &str,
        mut object: Object,
    ) -> ApiResult<Arc<Cached>> {
        let key = keys::object(scope.info(), scope.namespace, name);
        let bytes = self.encode(scope.entry, &mut object)?;
        let writing = self.writing(scope.entry, &key);
        let created = match self.ttl(scope.entry) {
            Some(ttl) => self.backend.create_expiring(&key, bytes, ttl).await,
            None => self.backend.create(&key, bytes).await,
        };
        let kv = created.map_err(|e| ApiError::from_storage(e, scope.target(name)))?;
        Ok(written(writing.as_ref(), kv.mod_revision, object))
    }

    /// Replaces `name` with `object` if it is still at `current`'s revision.
    /// `None` when the attempt must start again: another writer came first,
    /// the object is gone, or `current` was the cache's guess and the write
    /// would change nothing (what the backend holds decides that).
    pub async fn update(
        &self,
        scope: Scope<'_>,
        name: &str,
        current: &Current,
        mut object: Object,
    ) -> ApiResult<Option<Arc<Cached>>> {
        let bytes = self.encode(scope.entry, &mut object)?;
        // A write that changes nothing writes nothing.
        if current.holds(&bytes, self.media_type, scope.entry) {
            let Current::Stored(kv) = current else {
                return Ok(None);
            };
            object.metadata_mut().resource_version = Some(kv.mod_revision.to_string());
            return Ok(Some(Cached::new(object)));
        }
        let key = keys::object(scope.info(), scope.namespace, name);
        let writing = self.writing(scope.entry, &key);
        let updated = match self.ttl(scope.entry) {
            Some(ttl) => {
                self.backend
                    .update_expiring(&key, bytes, current.revision(), ttl)
                    .await
            }
            None => self.backend.update(&key, bytes, current.revision()).await,
        };
        match updated {
            Ok(kv) => Ok(Some(written(writing.as_ref(), kv.mod_revision, object))),
            Err(StorageError::Conflict(_) | StorageError::NotFound(_)) => Ok(None),
            Err(e) => Err(ApiError::from_storage(e, scope.target(name))),
        }
    }

    /// Removes `name` if it is still at `revision`; false when it is gone
    /// or changed since.
    pub async fn delete(&self, scope: Scope<'_>, name: &str, revision: u64) -> ApiResult<bool> {
        let key = keys::object(scope.info(), scope.namespace, name);
        match self.backend.delete(&key, Some(revision)).await {
            Ok(_) => Ok(true),
            Err(StorageError::NotFound(_) | StorageError::Conflict(_)) => Ok(false),
            Err(e) => Err(ApiError::from_storage(e, scope.target(name))),
        }
    }

    /// Changes `name` by `change` in one read-modify-write of the backend
    /// (upstream's GuaranteedUpdate), tried again when another writer came
    /// first: `change` gets the object as stored now (`None` when there is
    /// none), decoded, and may be called several times. Its error ends the
    /// update and is answered.
    pub async fn guaranteed_update(
        &self,
        scope: Scope<'_>,
        name: &str,
        change: &mut (dyn FnMut(Option<Object>) -> ApiResult<Change> + Send),
    ) -> ApiResult<Outcome> {
        let key = keys::object(scope.info(), scope.namespace, name);
        let writing = self.writing(scope.entry, &key);
        let mut failure = None;
        let mut wrote = None;
        let outcome = self
            .backend
            .guaranteed_update_expiring(&key, self.ttl(scope.entry), &mut |current| {
                wrote = None;
                let current = current.map(|kv| decode(scope.entry, kv)).transpose();
                let step = current
                    .and_then(&mut *change)
                    .and_then(|change| match change {
                        Change::Keep => Ok(Update::Keep),
                        Change::Delete => Ok(Update::Delete),
                        Change::Write(mut object) => {
                            let bytes = self.encode(scope.entry, &mut object)?;
                            wrote = Some(object);
                            Ok(Update::Write(bytes))
                        }
                    });
                step.map_err(|e| {
                    failure = Some(e);
                    StorageError::Internal("aborted".into())
                })
            })
            .await;
        if let Some(e) = failure {
            return Err(e);
        }
        let kv = outcome.map_err(|e| ApiError::from_storage(e, scope.target(name)))?;
        Ok(match (kv, wrote) {
            (None, _) => Outcome::Gone,
            (Some(kv), Some(object)) => {
                Outcome::Written(written(writing.as_ref(), kv.mod_revision, object))
            }
            (Some(kv), None) => Outcome::Kept(Current::Stored(kv)),
        })
    }

    /// Tells the resource's cache (when it has one) that `key` is being
    /// written, until the guard is dropped.
    fn writing(&self, entry: &KindEntry, key: &str) -> Option<Writing> {
        self.caches.started(entry).map(|cache| cache.writing(key))
    }
}

/// `object`, just stored at `revision`: stamped with it, and handed to the
/// resource's cache (when the write told it, [`CachedStore::writing`]) for
/// the write's event.
fn written(writing: Option<&Writing>, revision: u64, mut object: Object) -> Arc<Cached> {
    object.metadata_mut().resource_version = Some(revision.to_string());
    let written = Cached::new(object);
    if let Some(writing) = writing {
        writing.offer(revision, &written);
    }
    written
}
