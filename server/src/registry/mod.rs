//! The generic registry: one implementation of every verb for every kind, driven
//! by what the scheme says about the kind (k8s.io/apiserver's generic registry
//! Store, without the 29 optional function fields: kind differences are the
//! `ResourceInfo` facts and `KindOps` hooks).
//!
//! Objects are the kinds' own Rust values ([`Object`] over `DynObject`): bodies
//! decode straight into them (JSON, YAML or protobuf), storage encodes and
//! decodes them, and responses are written from them.
//!
//! Call order on writes, as upstream documents it: decode and type check ->
//! unknown fields (`fieldValidation`) -> prepare (strategy) -> admit (kind hooks,
//! defaults, validation) -> metadata validation -> storage.

mod create;
mod current;
mod delete;
pub mod hooks;
mod list;
mod objects;
mod scale;
mod strategy;
mod update;
mod watch;

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use kapi_runtime::scheme::{KindEntry, Scheme};
use kapi_storage::{KeyValue, Storage};

pub use crate::body::{Input, Object};
pub use crate::scope::{Endpoint, Scope};
use crate::stored::{StorageMediaType, codec, keys};
pub use delete::{Deleted, FOREGROUND, ORPHAN, write_gc_finalizers};
pub use hooks::Hooks;
pub use list::{ListOptions, ListPage};
pub use scale::ScaleAnswer;
pub use strategy::check_namespace;
pub use update::{Edit, PatchKind};
pub use watch::{WatchOptions, WatchStart};

pub use crate::options::{FieldValidation, WriteOptions};

use crate::api_error::{ApiError, ApiResult};
use crate::cache::{Cached, Caches};
use crate::strategic_merge::PatchSchema;

/// The result of a write: the object as stored, and warnings for the client.
#[derive(Debug)]
pub struct Written {
    /// The object with its new resourceVersion.
    pub object: Object,
    /// `Warning` header texts.
    pub warnings: Vec<String>,
    /// Whether the write created the object (an apply to a missing one).
    pub created: bool,
}

impl Written {
    /// The result of a write that changed an existing object or made one
    /// by create.
    pub fn new(object: Object, warnings: Vec<String>) -> Written {
        Written {
            object,
            warnings,
            created: false,
        }
    }
}

/// The generic registry over one storage backend.
#[derive(Clone)]
pub struct Registry {
    storage: Arc<dyn Storage>,
    /// The kinds served now: replaced whole when a kind defined at run time
    /// comes, changes or goes; a request keeps the one it started with.
    scheme: Arc<RwLock<Arc<Scheme>>>,
    media_type: StorageMediaType,
    /// The schemas strategic merge patches follow, by `apiVersion/kind`, made
    /// on first use.
    patch_schemas: Arc<std::sync::Mutex<HashMap<String, Arc<PatchSchema>>>>,
    /// What kinds do beyond the common strategy.
    hooks: Arc<Hooks>,
    /// The admission plugins every write goes through.
    admission: Arc<crate::admission::Chain>,
    /// The merge schemas of managedFields tracking, made on first use.
    merge_schemas: Arc<crate::field_manager::Schemas>,
    /// What reads are served from.
    caches: Arc<Caches>,
}

impl Registry {
    /// A registry serving `scheme` from `storage`, writing objects as
    /// [`StorageMediaType::default`].
    pub fn new(storage: Arc<dyn Storage>, scheme: Arc<Scheme>) -> Registry {
        Registry {
            caches: Arc::new(Caches::new(storage.clone())),
            storage,
            scheme: Arc::new(RwLock::new(scheme)),
            media_type: StorageMediaType::default(),
            patch_schemas: Arc::default(),
            hooks: Arc::default(),
            admission: Arc::default(),
            merge_schemas: Arc::default(),
        }
    }

    /// Calls `hooks` where kinds have their own behaviour (assembled at
    /// start-up: `crate::kinds::builtin` for the built-in kinds).
    pub fn with_hooks(mut self, hooks: Hooks) -> Registry {
        self.hooks = Arc::new(hooks);
        self
    }

    /// Runs every write through `chain` (the registry alone admits
    /// everything).
    pub fn with_admission(mut self, chain: crate::admission::Chain) -> Registry {
        self.admission = Arc::new(chain);
        self
    }

    /// The kinds' hooks.
    pub fn hooks(&self) -> &Hooks {
        &self.hooks
    }

    /// Writes objects in `media_type` from now on (objects already stored stay
    /// readable in whatever format they were written).
    pub fn with_storage_media_type(mut self, media_type: StorageMediaType) -> Registry {
        self.media_type = media_type;
        self
    }

    /// Ownership tracking (managedFields) over `scheme`.
    pub(crate) fn field_manager<'s>(
        &'s self,
        scheme: &'s Scheme,
    ) -> crate::field_manager::FieldManager<'s> {
        crate::field_manager::FieldManager {
            schemas: &self.merge_schemas,
            scheme,
        }
    }

    /// The schema a strategic merge patch of `entry`'s kind follows.
    pub fn patch_schema(&self, entry: &KindEntry) -> Arc<PatchSchema> {
        self.schema_for(
            format!("{}/{}", entry.info.api_version(), entry.info.kind),
            |defs| entry.schema(defs),
        )
    }

    /// The schema of a body that is no kind (a Scale).
    pub fn body_patch_schema(&self, body: &kapi_runtime::scheme::BodyEntry) -> Arc<PatchSchema> {
        self.schema_for(format!("{}/{}", body.api_version(), body.kind), |defs| {
            (body.schema)(defs)
        })
    }

    fn schema_for(
        &self,
        key: String,
        schema: impl FnOnce(&mut kapi_runtime::openapi::Definitions) -> serde_json::Value,
    ) -> Arc<PatchSchema> {
        let mut cache = self
            .patch_schemas
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cache
            .entry(key)
            .or_insert_with(|| Arc::new(PatchSchema::of(schema)))
            .clone()
    }

    /// The kinds served now.
    pub fn scheme(&self) -> Arc<Scheme> {
        self.scheme
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Serves `scheme` from now on (requests already started keep theirs).
    pub fn set_scheme(&self, scheme: Arc<Scheme>) {
        // The caches of kinds no longer served (a definition deleted or
        // changed) stop; a kind served again starts a new one.
        self.caches.retain(&scheme);
        *self.scheme.write().unwrap_or_else(PoisonError::into_inner) = scheme;
    }

    /// The storage backend.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// Whether reads of `scope`'s kind are served from the watch cache:
    /// any stored kind, compiled or custom (whose cache follows its storage
    /// version's entry, made again only when its definition changes).
    /// The counters of what the watch caches served.
    pub fn cache_metrics(&self) -> &crate::cache::ListMetrics {
        &self.caches.metrics
    }

    fn cached(&self, scope: Scope<'_>) -> bool {
        self.hooks.is_stored(scope.info())
    }

    /// The number of `group`'s `resource` objects, where its watch cache
    /// knows it.
    pub fn object_count(&self, group: &str, resource: &str) -> Option<usize> {
        self.caches.count(group, resource)
    }

    /// Stops the watch caches' watches of the store (at shutdown).
    pub fn stop_caches(&self) {
        self.caches.stop();
    }

    /// The watch cache of `(group, version, plural)`, started on first use
    /// and listed (or given up on) when this answers; `None` for a kind the
    /// scheme does not serve.
    pub async fn listed_cache(
        &self,
        (group, version, plural): (&str, &str, &str),
    ) -> Option<Arc<crate::cache::ResourceCache>> {
        let entry = self.scheme().get(group, version, plural)?.clone();
        let cache = self.caches.of(&entry);
        cache.listed().await;
        Some(cache)
    }

    /// Reads one object (a consistent read).
    pub async fn get(&self, scope: Scope<'_>, name: &str) -> ApiResult<Object> {
        let cached = self.get_shared(scope, name).await?;
        cached.into_object().map_err(ApiError::internal)
    }

    /// Reads one object (a consistent read), shared with the watch cache
    /// when it comes from there.
    pub async fn get_shared(&self, scope: Scope<'_>, name: &str) -> ApiResult<Arc<Cached>> {
        if let Some(rest) = self.hooks.rest(scope.info())
            && let Some(all) = rest.read_all(self.storage.as_ref(), scope).await
        {
            // A kind served from elsewhere than storage.
            return all?
                .into_iter()
                .find(|o| o.metadata().name() == name)
                .map(Cached::new)
                .ok_or_else(|| {
                    rest.missing(name)
                        .unwrap_or_else(|| ApiError::not_found(scope.target(name)))
                });
        }
        let key = key(scope, name);
        if let Some(found) = self.get_cached(scope, &key).await {
            let cached = found.ok_or_else(|| ApiError::not_found(scope.target(name)))?;
            return scope.to_served_cached(&cached);
        }
        let kv = self
            .storage
            .get(&key)
            .await
            .map_err(|e| ApiError::from_storage(e, scope.target(name)))?;
        let kv = kv.ok_or_else(|| ApiError::not_found(scope.target(name)))?;
        Ok(Cached::new(scope.to_served(decode(scope.entry, &kv)?)?))
    }

    /// A consistent read of one key from the watch cache, once it has
    /// reached the store's current revision. Upstream reads a GET without
    /// resourceVersion from etcd; the answer is the same, and on etcd the
    /// revision costs less than the read: reads that arrive together share
    /// one request for it. The outer `None` when the cache cannot answer.
    async fn get_cached(&self, scope: Scope<'_>, key: &str) -> Option<Option<Arc<Cached>>> {
        if !self.cached(scope) {
            return None;
        }
        let cache = self.caches.of(scope.entry);
        if !cache.serves_consistent_reads() {
            return None;
        }
        let revision = self.current_revision().await.ok()?;
        if !cache.wait_fresh(revision).await {
            return None;
        }
        cache.get(key)
    }
}

/// Decodes a stored object of `entry`'s kind; corrupt data is an internal error.
fn decode(entry: &KindEntry, kv: &KeyValue) -> ApiResult<Object> {
    codec::decode_stored(entry, kv).map_err(ApiError::internal)
}

/// The storage key of object `name` in `scope`.
fn key(scope: Scope<'_>, name: &str) -> String {
    keys::object(scope.info(), scope.namespace, name)
}
