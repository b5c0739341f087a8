use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::Time;
use kapi_codegen::ApiType;

use crate::api_type::ApiType;
use crate::go_json::omitempty;
use crate::openapi::{Definitions, OpenApi, object};

/// TypeMeta: the `apiVersion` and `kind` every object and list carries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeMeta {
    /// Kind in CamelCase, e.g. `ConfigMap`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// `group/version`, or `v1` for the core group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
}

/// ObjectMeta: the metadata every persisted object has, field for field as in
/// k8s.io/apimachinery/pkg/apis/meta/v1.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// Unique name within a namespace (or the cluster, for cluster-scoped kinds).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub name: Option<String>,
    /// Prefix from which the server generates a unique name when `name` is empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub generate_name: Option<String>,
    /// Namespace of a namespaced object; empty for cluster-scoped ones.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub namespace: Option<String>,
    /// Deprecated and never set by the server; kept so old clients decode.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub self_link: Option<String>,
    /// Unique id of this incarnation of the object, set by the server on create.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub uid: Option<String>,
    /// Opaque version of the object for optimistic concurrency and watches.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub resource_version: Option<String>,
    /// Sequence number of the desired state, bumped by the server on spec changes.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 7)]
    pub generation: Option<i64>,
    /// When the object was created, set by the server. Written as `null` when
    /// unset, as Go writes its zero time.
    #[serde(default)]
    #[api(proto = 8, proto_value)]
    pub creation_timestamp: Option<Time>,
    /// When deletion was requested; the object stays until finalizers are gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    pub deletion_timestamp: Option<Time>,
    /// Seconds allowed for graceful termination once deletion was requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10)]
    pub deletion_grace_period_seconds: Option<i64>,
    /// Key/value pairs for selecting and grouping objects.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 11)]
    pub labels: Option<BTreeMap<String, String>>,
    /// Arbitrary non-identifying key/value data for tools.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 12)]
    pub annotations: Option<BTreeMap<String, String>>,
    /// Objects this one depends on, for garbage collection.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("uid"),
        patch_strategy = "merge",
        patch_merge_key = "uid"
    )]
    #[api(proto = 13)]
    pub owner_references: Option<Vec<OwnerReference>>,
    /// Names of controllers that must act before the object is removed.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "set", patch_strategy = "merge")]
    #[api(proto = 14)]
    pub finalizers: Option<Vec<String>>,
    /// Which manager owns which fields (server-side apply bookkeeping).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 17)]
    pub managed_fields: Option<Vec<ManagedFieldsEntry>>,
}

impl ObjectMeta {
    /// The name, or `""` when unset.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or_default()
    }

    /// The namespace, or `""` when unset.
    pub fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or_default()
    }

    /// The finalizers, or an empty slice.
    pub fn finalizers(&self) -> &[String] {
        self.finalizers.as_deref().unwrap_or_default()
    }
}

/// A reference to an owning object (garbage collection and adoption).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct OwnerReference {
    /// API version of the owner.
    #[api(required)]
    #[api(proto = 5)]
    pub api_version: String,
    /// Kind of the owner.
    #[api(required)]
    #[api(proto = 1)]
    pub kind: String,
    /// Name of the owner.
    #[api(required)]
    #[api(proto = 3)]
    pub name: String,
    /// UID of the owner.
    #[api(required)]
    #[api(proto = 4)]
    pub uid: String,
    /// Whether the owner is the managing controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6)]
    pub controller: Option<bool>,
    /// Whether the owner cannot be deleted before this object is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub block_owner_deletion: Option<bool>,
}

/// Which fields a manager owns, as recorded by server-side apply.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ManagedFieldsEntry {
    /// Name of the workflow that manages the fields.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub manager: Option<String>,
    /// `Apply` or `Update`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub operation: Option<String>,
    /// Version of the schema the field set is expressed in.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub api_version: Option<String>,
    /// When the entry was last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub time: Option<Time>,
    /// Format of `fieldsV1`; always `FieldsV1`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub fields_type: Option<String>,
    /// The set of owned fields in the FieldsV1 trie format.
    #[serde(default, rename = "fieldsV1", skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub fields_v1: Option<FieldsV1>,
    /// The subresource the entry was made through, if any.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 8)]
    pub subresource: Option<String>,
}

/// metav1.FieldsV1: a set of fields in the JSON trie format of managed fields
/// (`{"f:metadata":{"f:labels":{}}}`), kept as its JSON text, as Go keeps its raw
/// bytes: nothing reads inside it on a request's path, and parsing it into a tree
/// would cost more than the rest of an object. The text is shared by clones.
#[derive(Clone, Debug)]
pub struct FieldsV1(Arc<Box<serde_json::value::RawValue>>);

/// Go's zero FieldsV1 (no bytes) is JSON `null`.
impl Default for FieldsV1 {
    fn default() -> FieldsV1 {
        FieldsV1(Arc::new(serde_json::value::RawValue::NULL.to_owned()))
    }
}

impl PartialEq for FieldsV1 {
    fn eq(&self, other: &FieldsV1) -> bool {
        self.text() == other.text()
    }
}

impl Eq for FieldsV1 {}

impl Serialize for FieldsV1 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for FieldsV1 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Box::<serde_json::value::RawValue>::deserialize(d).map(|raw| FieldsV1(Arc::new(raw)))
    }
}

impl ApiType for FieldsV1 {}

impl ApiType for TypeMeta {}

// Every version of every kind shares the meta types.
crate::identity_conversions!(FieldsV1, TypeMeta);

impl OpenApi for FieldsV1 {
    fn schema(defs: &mut Definitions) -> Value {
        defs.define(
            "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
            |_| json!({"type": "object"}),
        )
    }
}

/// `kind` and `apiVersion`, which a flattening struct lists as its own.
impl OpenApi for TypeMeta {
    fn schema(defs: &mut Definitions) -> Value {
        let (properties, required) = Self::flattened(defs);
        object("", properties, required)
    }

    fn flattened(_: &mut Definitions) -> (Map<String, Value>, Vec<String>) {
        let mut properties = Map::new();
        properties.insert("apiVersion".into(), json!({"type": "string"}));
        properties.insert("kind".into(), json!({"type": "string"}));
        (properties, Vec::new())
    }
}

impl FieldsV1 {
    /// From JSON text (checked to be JSON).
    pub fn from_raw(raw: &[u8]) -> Result<FieldsV1, serde_json::Error> {
        let text = std::str::from_utf8(raw).map_err(serde::de::Error::custom)?;
        serde_json::value::RawValue::from_string(text.to_owned()).map(|raw| FieldsV1(Arc::new(raw)))
    }

    /// The JSON text, as protobuf carries it.
    pub fn raw(&self) -> &[u8] {
        self.text().as_bytes()
    }

    /// The JSON text.
    pub fn text(&self) -> &str {
        self.0.get()
    }

    /// Whether it is JSON `null` (no set at all).
    pub fn is_null(&self) -> bool {
        self.text() == "null"
    }
}

/// ListMeta: the metadata of a list response.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ListMeta {
    /// Deprecated; never set.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub self_link: Option<String>,
    /// The revision the list was read at.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub resource_version: Option<String>,
    /// Token for the next page, when the list was cut by `limit`.
    #[serde(default, rename = "continue", skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub continue_: Option<String>,
    /// How many more items the full list has, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub remaining_item_count: Option<i64>,
}
