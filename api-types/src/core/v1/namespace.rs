//! Namespaces: the scopes that partition namespaced objects.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};

use crate::go_json::{null_as_default, omitempty};

/// The label Kubernetes puts on every namespace, holding its name, so that label
/// selectors can pick namespaces by name.
pub const METADATA_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// A scope for names: namespaced objects are unique per namespace, and policies
/// and quotas apply per namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "namespaces",
    short_names("ns"),
    verbs("create", "delete", "get", "list", "patch", "update", "watch"),
    generation = false,
    name_format = "dns1123-label",
    cluster_scoped,
    status,
    selectable_fields("status.phase"),
    printer_column(name = "Status", type = "string", json_path = ".status.phase",
        description = "Whether the namespace is Active or Terminating."),
    subresource(name = "finalize", verbs("update"), prepare_update = take_finalizers),
    prepare_create = add_kubernetes_finalizer,
    prepare_update = keep_finalizers
)]
#[api(defaults = default_namespace)]
#[api(validate = super::validation::validate_namespace)]
pub struct Namespace {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// Finalizers that must run before the namespace can go away.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: NamespaceSpec,
    /// Phase and conditions.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: NamespaceStatus,
}

/// The desired state of a namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceSpec {
    /// Names of the components that must clean up the namespace's content before
    /// it is removed, e.g. `kubernetes`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub finalizers: Option<Vec<String>>,
}

/// The observed state of a namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceStatus {
    /// `Active`, or `Terminating` once deletion has started.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(one_of("Active", "Terminating"))]
    #[api(proto = 1)]
    pub phase: Option<String>,
    /// Problems found while deleting the namespace's content.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("type"),
        patch_strategy = "merge",
        patch_merge_key = "type"
    )]
    #[api(proto = 2)]
    pub conditions: Option<Vec<NamespaceCondition>>,
}

/// One condition of a namespace, e.g. `NamespaceDeletionContentFailure`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceCondition {
    /// Condition type.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[api(required, one_of("True", "False", "Unknown"))]
    #[api(proto = 2)]
    pub status: String,
    /// When the status last changed.
    #[serde(default)]
    #[api(proto = 4, proto_value)]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub reason: Option<String>,
    /// Human-readable detail of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub message: Option<String>,
}

/// The finalizer of the namespace lifecycle, which empties a namespace being
/// deleted.
const KUBERNETES_FINALIZER: &str = "kubernetes";

/// PrepareForCreate: a namespace is created with the `kubernetes` finalizer
/// added to those it asks for.
fn add_kubernetes_finalizer(ns: &mut Namespace) {
    let finalizers = ns.spec.finalizers.get_or_insert_with(Vec::new);
    if !finalizers.iter().any(|f| f == KUBERNETES_FINALIZER) {
        finalizers.push(KUBERNETES_FINALIZER.to_owned());
    }
}

/// PrepareForUpdate through the main endpoint: the finalizers stay as stored;
/// only `namespaces/<name>/finalize` changes them.
fn keep_finalizers(new: &mut Namespace, old: &Namespace) {
    new.spec.finalizers.clone_from(&old.spec.finalizers);
}

/// PrepareForUpdate of `namespaces/<name>/finalize`: the body's spec (its
/// finalizers) and metadata, the stored status.
fn take_finalizers(new: &mut Namespace, old: &Namespace) {
    new.status.clone_from(&old.status);
}

/// Kubernetes' namespace defaults: phase `Active` (`SetDefaults_NamespaceStatus`)
/// and the `kubernetes.io/metadata.name` label (`SetDefaults_Namespace`).
fn default_namespace(ns: &mut Namespace) {
    if ns.status.phase.as_deref().unwrap_or_default().is_empty() {
        ns.status.phase = Some("Active".to_owned());
    }
    if let Some(name) = ns.metadata.name.clone().filter(|n| !n.is_empty()) {
        let labels = ns.metadata.labels.get_or_insert_with(Default::default);
        labels.insert(METADATA_NAME_LABEL.to_owned(), name);
    }
}
