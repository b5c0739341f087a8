//! The facts of a kind that `#[derive(Resource)]` writes as constants and a
//! custom resource builds at run time: identity, REST verbs, subresources,
//! printer columns, name format. Plain values, below everything that handles
//! objects (the `Resource` trait, discovery, the OpenAPI routes).

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
    /// Where the kind's objects are kept in the store, under its prefix
    /// (`--etcd-prefix`, `/registry`): `<group>/<plural>` by default, as a
    /// generic API server and custom resources keep them; kube-apiserver's own
    /// kinds under their bare plural or an older name (`minions`,
    /// `services/specs`), as its storage factory keeps them.
    pub storage_prefix: &'static str,
    /// Whether objects are stored as JSON whatever `--storage-media-type`
    /// says, as kube-apiserver stores CustomResourceDefinitions and
    /// APIServices.
    pub storage_json: bool,
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
