//! [`Resource`]: what `#[derive(Resource)]` says about a kind.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::DynObject;
use crate::api_type::ApiType;
use crate::meta::ObjectMeta;

/// A `kubectl get` column of a kind (an additionalPrinterColumn).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PrinterColumn {
    /// Header, e.g. `Ready`.
    pub name: &'static str,
    /// OpenAPI type: `string`, `integer`, `number`, `boolean` or `date`.
    pub type_: &'static str,
    /// Optional OpenAPI format.
    pub format: &'static str,
    /// What the column shows.
    pub description: &'static str,
    /// 0 for the default view, 1 and more for `-o wide`.
    pub priority: i32,
    /// kubectl-style JSON path of the value, e.g. `.spec.replicas`.
    pub json_path: &'static str,
}

/// Identity and REST facts of one kind, shared by every instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ResourceInfo {
    /// API group; `""` for the core group.
    pub group: &'static str,
    /// Version, e.g. `v1`.
    pub version: &'static str,
    /// `group/version`, or just `version` for the core group (`apps/v1`, `v1`).
    pub group_version: &'static str,
    /// Kind, e.g. `ConfigMap`.
    pub kind: &'static str,
    /// Plural resource name used in URLs, e.g. `configmaps`.
    pub plural: &'static str,
    /// Singular name, e.g. `configmap`.
    pub singular: &'static str,
    /// Short names for kubectl, e.g. `cm`.
    pub short_names: &'static [&'static str],
    /// Categories such as `all`.
    pub categories: &'static [&'static str],
    /// The verbs served, in Kubernetes' order (all eight for most kinds; only
    /// `create` for the review kinds, `get` and `list` for ComponentStatus).
    pub verbs: &'static [&'static str],
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Whether the kind has a `/status` subresource (spec and status are then
    /// written through different endpoints).
    pub status_subresource: bool,
    /// Fields usable in field selectors besides `metadata.name`/`metadata.namespace`.
    pub selectable_fields: &'static [&'static str],
    /// Selectable fields the watch cache indexes: a list or watch pinning one
    /// to a value (`spec.nodeName=node-1`) visits only the objects holding it
    /// (upstream's pod storage indexes `spec.nodeName`, which every kubelet
    /// selects on).
    pub indexed_fields: &'static [&'static str],
    /// Columns for `kubectl get`, after NAME and before AGE.
    pub printer_columns: &'static [PrinterColumn],
    /// Whether a delete answers with the deleted object instead of a `Success`
    /// Status (k8s.io/apiserver's `ReturnDeletedObject`, set for pods).
    pub return_deleted_object: bool,
    /// Whether a delete that names no propagation policy orphans the object's
    /// dependents (the `orphan` finalizer) instead of leaving them to be
    /// deleted in the background: upstream's default garbage collection
    /// policy of ReplicationControllers and Jobs, kept for compatibility.
    pub orphan_dependents: bool,
    /// Whether `metadata.generation` is set on create and bumped when anything
    /// but metadata (and status) changes; off for kinds Kubernetes does not track
    /// (ConfigMap, Secret, Pod in 1.32), on for custom resources.
    pub tracks_generation: bool,
    /// How object names are validated.
    pub name_format: NameFormat,
    /// Whether `kubectl get` tables end with an AGE column (all kinds but
    /// ComponentStatus).
    pub age_column: bool,
    /// The `/scale` subresource, when the kind has one.
    pub scale: Option<ScaleSubresource>,
    /// The other subresources (`pods/eviction`, `namespaces/finalize`...), in
    /// name order; `status` and `scale` are the fields above.
    pub subresources: &'static [Subresource],
    /// The fields server-side apply leaves unowned through each endpoint.
    pub reset_fields: ResetFields,
}

/// A subresource other than `status` and `scale`: either a part of the object
/// written through its own endpoint (`pods/ephemeralcontainers`,
/// `certificatesigningrequests/approval`, `namespaces/finalize`: the body is
/// the object, and the kind's hook decides what such a write may change), or an
/// action taking a body of another kind (`pods/eviction` takes a policy/v1
/// Eviction), which the server implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Subresource {
    /// The path segment, e.g. `eviction`.
    pub name: &'static str,
    /// The verbs served, in Kubernetes' order.
    pub verbs: &'static [&'static str],
    /// The body's group, version and kind when it is not the resource's own
    /// (an action); `None` for a part of the object.
    pub body: Option<BodyKind>,
}

/// The group, version and kind of a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BodyKind {
    /// API group, `""` for core.
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Kind, e.g. `Eviction`.
    pub kind: &'static str,
}

impl Subresource {
    /// Whether the subresource serves `verb`.
    pub fn serves(&self, verb: &str) -> bool {
        self.verbs.contains(&verb)
    }
}

/// The fields an endpoint resets (upstream's ResetFieldsStrategy): what a
/// write through it cannot change, which therefore no manager owns through
/// it. As dotted paths (`status`, `metadata.labels`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ResetFields {
    /// Through the object itself: `status` for a kind with a `/status`.
    pub main: &'static [&'static str],
    /// Through `/status`: `spec`, and for some kinds parts of the metadata.
    pub status: &'static [&'static str],
}

/// Where a kind keeps what its `/scale` subresource (an autoscaling/v1 Scale)
/// shows and changes, as kubectl-style paths into the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScaleSubresource {
    /// The desired replica count, e.g. `.spec.replicas`.
    pub spec_replicas: &'static str,
    /// The observed replica count, e.g. `.status.replicas`.
    pub status_replicas: &'static str,
    /// The pods' label selector, e.g. `.spec.selector` (a LabelSelector, or
    /// already selector text).
    pub label_selector: &'static str,
}

/// The name validation of a kind (Kubernetes' per-kind `ValidateName`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NameFormat {
    /// RFC 1123 subdomain: most kinds.
    Dns1123Subdomain,
    /// RFC 1123 label: Namespace.
    Dns1123Label,
    /// RFC 1035 label (starts with a letter): Service.
    Dns1035Label,
    /// Any name that can be one segment of a URL path (not `.` or `..`, no
    /// `/` or `%`): core Events, whose old clients name them freely.
    PathSegment,
}

impl NameFormat {
    /// The errors of `name` under this format, as Kubernetes words them.
    pub fn errors(self, name: &str) -> Vec<String> {
        use crate::validation::{
            dns1035_label_errors, dns1123_label_errors, dns1123_subdomain_errors,
            path_segment_errors,
        };
        match self {
            NameFormat::Dns1123Subdomain => dns1123_subdomain_errors(name),
            NameFormat::Dns1123Label => dns1123_label_errors(name),
            NameFormat::Dns1035Label => dns1035_label_errors(name),
            NameFormat::PathSegment => path_segment_errors(name),
        }
    }
}

impl ResourceInfo {
    /// Whether the kind serves `verb` (`get`, `create`, `deletecollection`...).
    pub fn serves(&self, verb: &str) -> bool {
        self.verbs.contains(&verb)
    }

    /// `apiVersion`: `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> &'static str {
        self.group_version
    }

    /// The subresource named `name` among [`ResourceInfo::subresources`].
    pub fn subresource(&self, name: &str) -> Option<&'static Subresource> {
        self.subresources.iter().find(|s| s.name == name)
    }

    /// The kind of lists of this kind, e.g. `ConfigMapList`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }
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
    const HUB: Option<&'static crate::convert::HubLink> = None;

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
