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
use kapi_storage::Storage;

pub use crate::body::{Input, Object};
pub use crate::scope::{Endpoint, Scope};
use crate::store::{Cached, CachedStore, ListMetrics, ObjectRef, ResourceCache};
pub use crate::store::{ListOptions, ListPage, WatchOptions, WatchStart};
use crate::stored::{StorageMediaType, keys};
pub use delete::{Deleted, FOREGROUND, ORPHAN, write_gc_finalizers};
pub use hooks::Hooks;
pub use scale::ScaleAnswer;
pub use strategy::check_namespace;
pub use update::{Edit, PatchKind};

pub use crate::options::{FieldValidation, WriteOptions};

use crate::api_error::{ApiError, ApiResult};
use crate::strategic_merge::PatchSchema;

/// The result of a write: the object as stored, and warnings for the client.
#[derive(Debug)]
pub struct Written {
    /// The object with its new resourceVersion, in the served version: its
    /// encodings are made once, for the answer and the watch cache's copy.
    pub object: Arc<Cached>,
    /// `Warning` header texts.
    pub warnings: Vec<String>,
    /// Whether the write created the object (an apply to a missing one).
    pub created: bool,
}

impl Written {
    /// The result of a write that changed an existing object or made one
    /// by create (or would have: a dry run).
    pub fn new(object: Object, warnings: Vec<String>) -> Written {
        Written::shared(Cached::new(object), warnings)
    }

    /// [`Written::new`] of an object the store shares.
    pub fn shared(object: Arc<Cached>, warnings: Vec<String>) -> Written {
        Written {
            object,
            warnings,
            created: false,
        }
    }

    /// The object, decoded.
    pub fn decoded(&self) -> ApiResult<ObjectRef<'_>> {
        self.object.object().map_err(ApiError::internal)
    }
}

/// The generic registry over one store.
#[derive(Clone)]
pub struct Registry {
    /// What objects are read from and written to.
    store: CachedStore,
    /// The kinds served now: replaced whole when a kind defined at run time
    /// comes, changes or goes; a request keeps the one it started with.
    scheme: Arc<RwLock<Arc<Scheme>>>,
    /// The schemas strategic merge patches follow, by `apiVersion/kind`, made
    /// on first use.
    patch_schemas: Arc<std::sync::Mutex<HashMap<String, Arc<PatchSchema>>>>,
    /// What kinds do beyond the common strategy.
    hooks: Arc<Hooks>,
    /// The admission plugins every write goes through.
    admission: Arc<crate::admission::Chain>,
    /// The merge schemas of managedFields tracking, made on first use.
    merge_schemas: Arc<crate::field_manager::Schemas>,
}

impl Registry {
    /// A registry serving `scheme` from `storage`, writing objects as
    /// [`StorageMediaType::default`].
    pub fn new(storage: Arc<dyn Storage>, scheme: Arc<Scheme>) -> Registry {
        Registry {
            store: CachedStore::new(storage),
            scheme: Arc::new(RwLock::new(scheme)),
            patch_schemas: Arc::default(),
            hooks: Arc::default(),
            admission: Arc::default(),
            merge_schemas: Arc::default(),
        }
    }

    /// Calls `hooks` where kinds have their own behaviour (assembled at
    /// start-up: `crate::kinds::builtin` for the built-in kinds).
    pub fn with_hooks(mut self, hooks: Hooks) -> Registry {
        let hooks = Arc::new(hooks);
        // A kind whose objects do not live in storage has nothing to cache.
        let stored = hooks.clone();
        self.store = self
            .store
            .with_uncached(move |info| !stored.is_stored(info));
        self.hooks = hooks;
        self
    }

    /// Runs every write through `chain` (the registry alone admits
    /// everything).
    /// Admission of an action's body (`body`, JSON of the kind `body_kind`
    /// posted to `subresource` of object `name`): the plugins that look at
    /// actions (admission webhooks and policies) may change or refuse it.
    pub async fn admit_action(
        &self,
        scope: Scope<'_>,
        subresource: &'static kapi_runtime::Subresource,
        name: &str,
        body_kind: (&'static str, &'static str, &'static str),
        body: &mut serde_json::Value,
        opts: &WriteOptions<'_>,
    ) -> ApiResult<()> {
        // Reviews carry the body whole, with its kind.
        if let serde_json::Value::Object(fields) = body {
            let (group, version, kind) = body_kind;
            let api_version = if group.is_empty() {
                version.to_owned()
            } else {
                format!("{group}/{version}")
            };
            fields
                .entry("kind")
                .or_insert_with(|| serde_json::Value::from(kind));
            fields
                .entry("apiVersion")
                .or_insert_with(|| serde_json::Value::from(api_version));
        }
        let request = crate::admission::Request::action(scope, subresource, name, body_kind, opts);
        self.admission.admit_action(&request, body, self).await
    }

    /// Whether admission looks at this action at all (else its body need
    /// not be made JSON for it).
    pub async fn admits_action(
        &self,
        scope: Scope<'_>,
        subresource: &'static kapi_runtime::Subresource,
        name: &str,
        body_kind: (&'static str, &'static str, &'static str),
        opts: &WriteOptions<'_>,
    ) -> ApiResult<bool> {
        let request = crate::admission::Request::action(scope, subresource, name, body_kind, opts);
        self.admission.selects_action(&request, self).await
    }

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
        self.store = self.store.with_media_type(media_type);
        self
    }

    /// Lets objects kept under `storage_prefix` expire `ttl` after each
    /// write ([`CachedStore::with_expiry`]).
    pub fn with_expiry(
        mut self,
        storage_prefix: &'static str,
        ttl: std::time::Duration,
    ) -> Registry {
        self.store = self.store.with_expiry(storage_prefix, ttl);
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
        let mut schemas = self
            .patch_schemas
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        schemas
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
        self.store.retain(&scheme);
        *self.scheme.write().unwrap_or_else(PoisonError::into_inner) = scheme;
    }

    /// The store objects are read from and written to.
    pub fn store(&self) -> &CachedStore {
        &self.store
    }

    /// The storage backend.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        self.store.backend()
    }

    /// The counters of the lists the store served from memory.
    pub fn cache_metrics(&self) -> &ListMetrics {
        self.store.metrics()
    }

    /// The number of `group`'s `resource` objects, where the store keeps
    /// them in memory.
    pub fn object_count(&self, group: &str, resource: &str) -> Option<usize> {
        self.store.object_count(group, resource)
    }

    /// Stops the store's watches of the backend (at shutdown).
    pub fn stop_caches(&self) {
        self.store.stop();
    }

    /// What the store keeps of `(group, version, plural)` in memory, read
    /// (or given up on) when this answers; `None` for a kind the scheme does
    /// not serve.
    pub async fn listed_cache(
        &self,
        (group, version, plural): (&str, &str, &str),
    ) -> Option<Arc<ResourceCache>> {
        let entry = self.scheme().get(group, version, plural)?.clone();
        Some(self.store.listed(&entry).await)
    }

    /// Reads one object (a consistent read).
    pub async fn get(&self, scope: Scope<'_>, name: &str) -> ApiResult<Object> {
        let cached = self.get_shared(scope, name).await?;
        cached.into_object().map_err(ApiError::internal)
    }

    /// Reads one object (a consistent read), shared with the store's other
    /// readers when it keeps it in memory.
    pub async fn get_shared(&self, scope: Scope<'_>, name: &str) -> ApiResult<Arc<Cached>> {
        if let Some(rest) = self.hooks.rest(scope.info())
            && let Some(all) = rest.read_all(self.store.backend().as_ref(), scope).await
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
        self.store.get(scope, name).await
    }
}

/// The storage key of object `name` in `scope`.
fn key(scope: Scope<'_>, name: &str) -> String {
    keys::object(scope.info(), scope.namespace, name)
}
