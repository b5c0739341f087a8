//! [`Resource`]: what `#[derive(Resource)]` says about a kind.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::api_type::ApiType;
use crate::meta::ObjectMeta;
use crate::object::{DynObject, HubLink};
pub use crate::resource_info::{
    BodyKind, NameFormat, PrinterColumn, ResetFields, ResourceInfo, ScaleSubresource, Subresource,
};

/// Another version a kind's objects are stored in, as JSON: how an object
/// of the kind (as JSON) becomes the stored version's and back. The
/// functions work on JSON values, as the stored version need not have a type
/// of its own.
#[derive(Debug)]
pub struct StoredForm {
    /// The stored version's `apiVersion`.
    pub api_version: &'static str,
    /// Makes an object of the kind (with its `apiVersion` and `kind`) the
    /// stored version's.
    pub to_stored: fn(&mut serde_json::Value) -> Result<(), String>,
    /// Makes an object of the stored version the kind's, applying the stored
    /// version's defaults on the way.
    pub from_stored: fn(&mut serde_json::Value) -> Result<(), String>,
}

/// A kind of the API: implemented by `#[derive(Resource)]`.
///
/// The hook methods have defaults; the derive overrides one when the kind names a
/// hook function in its `#[resource(...)]` attribute.
pub trait Resource:
    ApiType
    + crate::openapi::OpenApi
    + Clone
    + std::fmt::Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
    /// Identity and REST facts.
    const INFO: &'static ResourceInfo;

    /// How this version converts to and from the kind's hub (storage) version;
    /// `None` for the hub itself (`#[resource(hub = Path)]`).
    const HUB: Option<&'static HubLink> = None;

    /// The version objects are stored in as JSON, when it is not this one
    /// (kube-apiserver stores CustomResourceDefinitions as
    /// `apiextensions.k8s.io/v1beta1`): `#[resource(stored_as = STATIC)]`.
    const STORED_AS: Option<&'static StoredForm> = None;

    /// The checks a write through this version adds to the kind's own
    /// validation, run on the object as stored (the hub version's type) and,
    /// on an update, the stored object: upstream validates a few kinds by the
    /// request's version (an events.k8s.io Event more strictly than a core
    /// one). `#[resource(validate_served = path)]`.
    fn validate_served(
        _object: &dyn DynObject,
        _old: Option<&dyn DynObject>,
        _errs: &mut crate::validation::FieldErrors,
    ) {
    }

    /// The object's metadata.
    fn metadata(&self) -> &ObjectMeta;

    /// The object's metadata, mutable.
    fn metadata_mut(&mut self) -> &mut ObjectMeta;

    /// Whether the desired state — every field but `metadata`, and `status` for
    /// a kind with a `/status` subresource — is semantically equal to `other`'s
    /// (generated from the struct's fields).
    fn spec_semantic_eq(&self, other: &Self) -> bool;

    /// Clears `status` (PrepareForCreate of a kind with a `/status` subresource).
    fn reset_status(&mut self) {}

    /// Takes `other`'s status (a write through the main endpoint keeps the
    /// stored status; one through `/status` keeps only the new status).
    fn copy_status_from(&mut self, _other: &Self) {}

    /// Kind-specific normalisation before every write, e.g. a Secret folding
    /// `stringData` into `data` (`#[resource(prepare = path)]`).
    fn prepare_for_write(&mut self) {}

    /// Kind-specific PrepareForCreate, after the generic one (server-owned
    /// metadata, status cleared): `#[resource(prepare_create = path)]`.
    fn prepare_create(&mut self) {}

    /// Kind-specific PrepareForUpdate through the main endpoint, with the stored
    /// object `old`: what the write may not change, counters bumped on a change
    /// (`#[resource(prepare_update = path)]`). Runs after the generic steps,
    /// on a defaulted object.
    fn prepare_update(&mut self, _old: &Self) {}

    /// PrepareForUpdate of a write through a subresource: `status`
    /// (`#[resource(prepare_status_update = path)]`, after the status was taken
    /// from the body) or one of [`ResourceInfo::subresources`]
    /// (`subresource(prepare_update = path)`, given the body, which it turns
    /// into what is written).
    fn prepare_subresource_update(&mut self, _subresource: &str, _old: &Self) {}

    /// Checks of a write through a subresource of
    /// [`ResourceInfo::subresources`] against the stored object, replacing
    /// [`Resource::validate_update`] for it (`subresource(validate_update =
    /// path)`).
    fn validate_subresource_update(
        &self,
        _subresource: &str,
        _old: &Self,
        _errs: &mut crate::validation::FieldErrors,
    ) {
    }

    /// Checks of an update against the stored object, `old` (immutable fields,
    /// allowed transitions: `#[resource(validate_update = path)]`), run after
    /// the new object's own validation.
    fn validate_update(&self, _old: &Self, _errs: &mut crate::validation::FieldErrors) {}

    /// What a write of this object should warn the client about (`Warning`
    /// headers: deprecated fields, values that work but surprise); `old` is the
    /// stored object on an update (`#[resource(warnings = path)]`).
    fn warnings(&self, _old: Option<&Self>) -> Vec<String> {
        Vec::new()
    }

    /// Fills in the answer of a kind that is created and answered but never
    /// stored, such as a SubjectAccessReview (`#[resource(answer = path)]`).
    fn answer(&mut self) {}

    /// The printer-column cells of this object, computed in code where a JSON path
    /// cannot express them (`#[resource(table_cells = path)]`); `None` uses the paths.
    fn table_cells(&self) -> Option<Vec<serde_json::Value>> {
        None
    }

    /// The text of the selectable field `label` when the kind computes it rather
    /// than reading it at its path (`#[resource(field_label = path)]`, upstream's
    /// `GetAttrs`: a pod's `status.podIP` is its first `status.podIPs`, a Job's
    /// `status.successful` its `status.succeeded`); `None` reads the path.
    fn field_label(&self, _label: &str) -> Option<String> {
        None
    }

    /// Graceful deletion (`#[resource(grace_period = path)]`): the seconds the object
    /// should stay in `Terminating` for a delete that asked for `requested` seconds,
    /// or `None` to delete at once.
    fn deletion_grace_period(&self, _requested: Option<i64>) -> Option<i64> {
        None
    }
}
