//! What a request addresses: the kind (in its stored and its served
//! version) and namespace, and which endpoint of an object a write goes
//! through. Shared by the registry, admission and the endpoints.

use std::sync::Arc;

use kapi_runtime::ResourceInfo;
use kapi_runtime::scheme::KindEntry;

use crate::api_error::{ApiError, ApiResult, Target};
use crate::body::Object;
use crate::cache::Cached;

/// The endpoint of an object a write goes through: each may change a
/// different part of the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// The object itself (`.../pods/<name>`).
    Main,
    /// `/status`.
    Status,
    /// A part of the object with an endpoint of its own
    /// (`pods/<name>/ephemeralcontainers`, `namespaces/<name>/finalize`).
    Part(&'static kapi_runtime::Subresource),
}

/// The kind and namespace a request addresses.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    /// The kind in its storage version (its hub): what the registry decodes,
    /// checks and stores.
    pub entry: &'a KindEntry,
    /// The version the client speaks: bodies arrive and answers leave in it.
    /// The same as `entry` unless the kind is served through its hub version.
    pub served: &'a KindEntry,
    /// The namespace from the path (None for cluster-scoped kinds or all namespaces).
    pub namespace: Option<&'a str>,
}

impl<'a> Scope<'a> {
    /// A scope of a kind served in its storage version.
    pub fn new(entry: &'a KindEntry, namespace: Option<&'a str>) -> Scope<'a> {
        Scope {
            entry,
            served: entry,
            namespace,
        }
    }

    /// An object of the served version as the storage version.
    pub fn to_storage(&self, object: Object) -> ApiResult<Object> {
        if self.served.hub().is_none() {
            return Ok(object);
        }
        self.served
            .to_hub(object.into_typed())
            .map(Object::new)
            .map_err(|e| self.conversion_error(e))
    }

    /// Whether objects of the storage version are served as they are.
    pub fn is_served_as_stored(&self) -> bool {
        // A custom object may be stored in an earlier storage version.
        self.served.hub().is_none() && !self.served.is_custom()
    }

    /// An object of the storage version as the served version.
    pub fn to_served(&self, object: Object) -> ApiResult<Object> {
        if self.is_served_as_stored() {
            return Ok(object);
        }
        self.served
            .to_served(object.into_typed())
            .map(Object::new)
            .map_err(|e| self.conversion_error(e))
    }

    /// A cached object of the storage version as this version's, converted
    /// once for every list, get and watcher of this version while the cache
    /// keeps the object ([`Cached::served`]).
    pub fn to_served_cached(&self, cached: &Arc<Cached>) -> ApiResult<Arc<Cached>> {
        if self.is_served_as_stored() {
            return Ok(cached.clone());
        }
        let convert = |object: &Object| {
            let typed = self.served.to_served(object.clone().into_typed())?;
            Ok(Object::new(typed))
        };
        cached
            .served(self.served, convert)
            .map_err(|e| self.conversion_error(e))
    }

    /// A failed conversion: a custom resource's comes from its webhook and
    /// is answered as it is, as upstream answers it.
    fn conversion_error(&self, message: String) -> ApiError {
        if self.served.is_custom() {
            ApiError::plain_internal(message)
        } else {
            ApiError::internal(message)
        }
    }

    /// The kind's facts.
    pub fn info(&self) -> &'static ResourceInfo {
        self.entry.info
    }

    /// The error target for an object of this scope.
    pub fn target(&self, name: &'a str) -> Target<'a> {
        Target {
            group: self.entry.info.group,
            resource: self.entry.info.plural,
            name,
        }
    }
}
