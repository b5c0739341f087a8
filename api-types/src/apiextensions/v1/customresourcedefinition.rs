//! CustomResourceDefinitions: new kinds served by the API server, with their
//! names, versions, schemas, subresources and conversion.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::ByteString;
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};

use super::json_schema::JSONSchemaProps;
use crate::go_json::{null_as_default, omitempty};

/// Adds a kind to the API: its group, names, scope and versions. The name
/// must be `<plural>.<group>`; once the names are accepted, the API server
/// serves the kind's objects (custom resources).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "apiextensions.k8s.io",
    version = "v1",
    plural = "customresourcedefinitions",
    storage_json,
    stored_as = super::stored::STORED_AS_V1BETA1,
    reset_status = "metadata, spec",
    short_names("crd", "crds"),
    categories("api-extensions"),
    cluster_scoped,
    status,
    prepare_create = record_storage_version,
    prepare_update = add_storage_version,
    printer_column(
        name = "Created At",
        type = "date",
        json_path = ".metadata.creationTimestamp",
        description = "When the definition was created."
    )
)]
#[api(validate = super::validation::validate_crd)]
pub struct CustomResourceDefinition {
    /// Name (`<plural>.<group>`), labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The kind to serve.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub spec: CustomResourceDefinitionSpec,
    /// Conditions, accepted names and stored versions, as last observed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: CustomResourceDefinitionStatus,
}

/// A new definition's objects are stored in its storage version from the
/// start (upstream's PrepareForCreate; the status is otherwise the server's
/// to fill in, and cleared on create).
fn record_storage_version(crd: &mut CustomResourceDefinition) {
    if let Some(storage) = crd.spec.versions.iter().find(|v| v.storage) {
        crd.status.stored_versions = vec![storage.name.clone()];
    }
}

/// An update that makes another version the storage version adds it to
/// `status.storedVersions` (objects will be stored in it from now on; the
/// versions already there stay until a migration removes them), as
/// upstream's PrepareForUpdate.
fn add_storage_version(crd: &mut CustomResourceDefinition, _old: &CustomResourceDefinition) {
    if let Some(storage) = crd.spec.versions.iter().find(|v| v.storage)
        && !crd.status.stored_versions.contains(&storage.name)
    {
        crd.status.stored_versions.push(storage.name.clone());
    }
}

/// What a CustomResourceDefinition adds to the API.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = default_names)]
pub struct CustomResourceDefinitionSpec {
    /// API group of the kind, e.g. `stable.example.com`; the definition's
    /// name ends with it.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub group: String,
    /// The kind's names: plural, singular, kind, list kind, short names,
    /// categories.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 3)]
    pub names: CustomResourceDefinitionNames,
    /// `Namespaced` or `Cluster`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 4)]
    pub scope: String,
    /// The versions served, in any order; exactly one is the storage version.
    /// Discovery lists them by Kubernetes version priority.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(list_type = "atomic")]
    #[api(proto = 7)]
    pub versions: Vec<CustomResourceDefinitionVersion>,
    /// How objects are converted between versions; `None` (only the
    /// apiVersion changes) by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    pub conversion: Option<CustomResourceConversion>,
    /// Keeps fields the schema does not declare (a leftover of v1beta1;
    /// must be false in v1, where `x-kubernetes-preserve-unknown-fields`
    /// does it per schema node).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 10)]
    pub preserve_unknown_fields: Option<bool>,
}

/// How custom resources change from one version to another.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceConversion {
    /// `None` (only the apiVersion is rewritten) or `Webhook` (a webhook
    /// converts).
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub strategy: String,
    /// The conversion webhook, for the `Webhook` strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub webhook: Option<WebhookConversion>,
}

/// A conversion webhook and the ConversionReview versions it understands.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct WebhookConversion {
    /// How to reach the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub client_config: Option<WebhookClientConfig>,
    /// `ConversionReview` versions the webhook accepts, preferred first; the
    /// API server sends the first it knows (`v1`, `v1beta1`).
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub conversion_review_versions: Vec<String>,
}

/// Where a webhook is and how to trust it: a URL or a Service (exactly one).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct WebhookClientConfig {
    /// The webhook's `https://` URL (no user, query or fragment), for
    /// webhooks outside the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub url: Option<String>,
    /// The Service in front of the webhook, for webhooks in the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub service: Option<ServiceReference>,
    /// PEM CA bundle that verifies the webhook's certificate (base64 in
    /// JSON); the API server's roots when empty.
    #[serde(default, skip_serializing_if = "no_bytes")]
    #[api(proto = 2)]
    pub ca_bundle: Option<ByteString>,
}

/// Go's `omitempty` on a `[]byte`: JSON leaves out an empty slice, while
/// protobuf still writes a non-nil one.
fn no_bytes(bytes: &Option<ByteString>) -> bool {
    bytes.as_ref().is_none_or(|b| b.0.is_empty())
}

/// Points at a Service, and a path and port on it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ServiceReference {
    /// Namespace of the Service.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub namespace: String,
    /// Name of the Service.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub name: String,
    /// URL path requests are sent to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub path: Option<String>,
    /// Port of the Service (1-65535); 443 by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub port: Option<i32>,
}

/// One version of a custom resource kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionVersion {
    /// The version, as in `/apis/<group>/<version>`, e.g. `v1` or `v2beta1`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Whether the version is served over REST.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub served: bool,
    /// Whether objects are stored in this version; true for exactly one.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub storage: bool,
    /// Whether the version is deprecated: responses then carry a warning.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 7)]
    pub deprecated: Option<bool>,
    /// The warning sent to clients of a deprecated version, instead of the
    /// default one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub deprecation_warning: Option<String>,
    /// The schema objects of this version are validated, pruned and
    /// defaulted with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub schema: Option<CustomResourceValidation>,
    /// The `status` and `scale` subresources of this version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub subresources: Option<CustomResourceSubresources>,
    /// Columns `kubectl get` shows besides the name; the age only when none
    /// are given.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 6)]
    pub additional_printer_columns: Option<Vec<CustomResourceColumnDefinition>>,
    /// Fields usable in field selectors, besides `metadata.name` and
    /// `metadata.namespace`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 9)]
    pub selectable_fields: Option<Vec<SelectableField>>,
}

/// A field custom resources can be selected by.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SelectableField {
    /// JSON path of the field (without array indexes), e.g. `.spec.color`;
    /// it must hold a string, integer or boolean.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub json_path: String,
}

/// One column of `kubectl get` for a custom resource.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceColumnDefinition {
    /// Column header.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// OpenAPI type of the cells: `integer`, `number`, `string`, `boolean`
    /// or `date`.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 2)]
    pub type_: String,
    /// OpenAPI format of the cells, e.g. `int32` or `name`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub format: Option<String>,
    /// What the column shows.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub description: Option<String>,
    /// 0 for the default view, more for `-o wide` only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub priority: Option<i32>,
    /// JSON path of the value within each object, e.g. `.spec.size`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 6)]
    pub json_path: String,
}

/// The singular name is the lower-cased kind, the list kind `<kind>List`,
/// unless given (`SetDefaults_CustomResourceDefinitionSpec`).
fn default_names(spec: &mut CustomResourceDefinitionSpec) {
    let names = &mut spec.names;
    if names.singular.as_deref().unwrap_or_default().is_empty() {
        names.singular = Some(names.kind.to_lowercase());
    }
    if names.list_kind.as_deref().unwrap_or_default().is_empty() && !names.kind.is_empty() {
        names.list_kind = Some(format!("{}List", names.kind));
    }
    // Without a conversion, only the apiVersion changes between versions.
    if spec.conversion.is_none() {
        spec.conversion = Some(CustomResourceConversion {
            strategy: "None".to_owned(),
            webhook: None,
        });
    }
}

/// The names a kind is served under.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionNames {
    /// Lower-case plural, as in `/apis/<group>/<version>/<plural>`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub plural: String,
    /// Lower-case singular, used by kubectl; the lower-cased kind by default.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub singular: Option<String>,
    /// Short aliases for kubectl, e.g. `crd`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub short_names: Option<Vec<String>>,
    /// CamelCase kind, as in objects' `kind`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 4)]
    pub kind: String,
    /// Kind of lists; `<kind>List` by default.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub list_kind: Option<String>,
    /// Groups of resources the kind belongs to, e.g. `all` for
    /// `kubectl get all`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 6)]
    pub categories: Option<Vec<String>>,
}

/// What was last observed of a CustomResourceDefinition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionStatus {
    /// Current conditions, one per type: `NamesAccepted`, `Established`,
    /// `NonStructuralSchema`, `Terminating`,
    /// `KubernetesAPIApprovalPolicyConformant`.
    /// Go writes `null` until a condition is set.
    #[serde(default)]
    #[api(list_type = "map", list_map_keys("type"))]
    #[api(proto = 1)]
    pub conditions: Option<Vec<CustomResourceDefinitionCondition>>,
    /// The names actually served, which may differ from the spec's while
    /// they conflict with another definition's.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub accepted_names: CustomResourceDefinitionNames,
    /// Every version objects have ever been stored in; a version leaves the
    /// list only once no stored object uses it.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub stored_versions: Vec<String>,
}

/// One condition of a CustomResourceDefinition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionCondition {
    /// The condition type, e.g. `Established`.
    // Required by the schema only: upstream does not check the conditions
    // a client writes.
    #[serde(default, rename = "type")]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub status: String,
    /// When the status last changed.
    #[serde(default)]
    #[api(proto = 3, proto_value)]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change, e.g. `NoConflicts`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub reason: Option<String>,
    /// Human-readable detail of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub message: Option<String>,
}

/// The schema of one version.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceValidation {
    /// The OpenAPI v3 schema of whole objects (a structural schema).
    #[serde(
        default,
        rename = "openAPIV3Schema",
        skip_serializing_if = "Option::is_none"
    )]
    #[api(proto = 1)]
    pub open_api_v3_schema: Option<JSONSchemaProps>,
}

/// The subresources of a custom resource version.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceSubresources {
    /// Present to serve `/status`: the main endpoint then ignores status
    /// changes and `/status` only takes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub status: Option<CustomResourceSubresourceStatus>,
    /// Present to serve `/scale`, mapping a Scale onto the objects' fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub scale: Option<CustomResourceSubresourceScale>,
}

/// Enables the `/status` subresource; has no settings (an empty message,
/// named so that protobuf knows it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_name = "CustomResourceSubresourceStatus")]
pub struct CustomResourceSubresourceStatus {}

/// Where the `/scale` subresource reads and writes replicas and the
/// selector.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceSubresourceScale {
    /// JSON path (under `.spec`, no array indexes) of the desired replicas
    /// a Scale's `spec.replicas` maps to.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub spec_replicas_path: String,
    /// JSON path (under `.status`) of the observed replicas a Scale's
    /// `status.replicas` reads; 0 when absent.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub status_replicas_path: String,
    /// JSON path (under `.status`) of the label selector, in string form,
    /// that a Scale's `status.selector` reads (for autoscalers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub label_selector_path: Option<String>,
}
