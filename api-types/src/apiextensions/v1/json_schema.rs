//! The OpenAPI v3 schema dialect of CustomResourceDefinitions: a recursive
//! `JSONSchemaProps`, its either-or fields (a schema or an array, a schema
//! or a boolean, a schema or a string list) and raw JSON values.
//!
//! The either-or types and `JSON` have JSON shapes of their own, written by
//! hand here as Go's `MarshalJSON`/`UnmarshalJSON` write them; their protobuf
//! messages are ordinary ones, derived.

use std::collections::BTreeMap;
use std::fmt;

use kapi_codegen::ApiType;
use kapi_runtime::ByteString;
use kapi_runtime::openapi::Definitions;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::go_json::omitempty;

/// One node of a structural OpenAPI v3 schema: its type and format, value
/// validations, sub-schemas, and the `x-kubernetes-*` extensions that steer
/// pruning, defaulting, merging and CEL validation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct JSONSchemaProps {
    /// JSON Schema `id`; not allowed in CustomResourceDefinitions.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub id: Option<String>,
    /// JSON Schema `$schema` (the dialect's URL); not allowed in
    /// CustomResourceDefinitions.
    #[serde(default, rename = "$schema", skip_serializing_if = "omitempty")]
    #[api(proto = 2, proto_name = "schema")]
    pub schema: Option<String>,
    /// JSON Schema `$ref`; not allowed in CustomResourceDefinitions.
    #[serde(default, rename = "$ref", skip_serializing_if = "Option::is_none")]
    #[api(proto = 3, proto_name = "ref")]
    pub ref_: Option<String>,
    /// What the node holds, for people (`kubectl explain` prints it).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub description: Option<String>,
    /// `object`, `array`, `string`, `integer`, `number` or `boolean`.
    #[serde(default, rename = "type", skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub type_: Option<String>,
    /// Format of the value, e.g. `int32`, `date-time`, `byte`, `uri`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub format: Option<String>,
    /// A short title.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 7)]
    pub title: Option<String>,
    /// The value put in place of an absent (or, with `nullable: false`,
    /// null) field when objects are read or written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub default: Option<JSON>,
    /// Largest number allowed.
    #[serde(
        default,
        serialize_with = "go_float",
        skip_serializing_if = "Option::is_none"
    )]
    #[api(proto = 9)]
    pub maximum: Option<f64>,
    /// Whether `maximum` itself is excluded.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 10)]
    pub exclusive_maximum: Option<bool>,
    /// Smallest number allowed.
    #[serde(
        default,
        serialize_with = "go_float",
        skip_serializing_if = "Option::is_none"
    )]
    #[api(proto = 11)]
    pub minimum: Option<f64>,
    /// Whether `minimum` itself is excluded.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 12)]
    pub exclusive_minimum: Option<bool>,
    /// Longest string allowed, in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 13)]
    pub max_length: Option<i64>,
    /// Shortest string allowed, in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 14)]
    pub min_length: Option<i64>,
    /// Regular expression (ECMA 262) strings must match.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 15)]
    pub pattern: Option<String>,
    /// Most items an array may hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 16)]
    pub max_items: Option<i64>,
    /// Fewest items an array may hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 17)]
    pub min_items: Option<i64>,
    /// Whether array items must differ; must be false in
    /// CustomResourceDefinitions (use `x-kubernetes-list-type: set`).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 18)]
    pub unique_items: Option<bool>,
    /// Numbers must be a multiple of this (greater than 0).
    #[serde(
        default,
        serialize_with = "go_float",
        skip_serializing_if = "Option::is_none"
    )]
    #[api(proto = 19)]
    pub multiple_of: Option<f64>,
    /// The only values allowed.
    #[serde(default, rename = "enum", skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 20)]
    pub enum_: Option<Vec<JSON>>,
    /// Most properties an object may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 21)]
    pub max_properties: Option<i64>,
    /// Fewest properties an object may have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 22)]
    pub min_properties: Option<i64>,
    /// Properties an object must have.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 23)]
    pub required: Option<Vec<String>>,
    /// The schema of an array's items (a list of schemas, one per position,
    /// is not allowed in CustomResourceDefinitions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 24)]
    pub items: Option<JSONSchemaPropsOrArray>,
    /// Schemas the value must all satisfy (value validations only).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 25)]
    pub all_of: Option<Vec<JSONSchemaProps>>,
    /// Schemas of which the value must satisfy exactly one.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 26)]
    pub one_of: Option<Vec<JSONSchemaProps>>,
    /// Schemas of which the value must satisfy at least one.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 27)]
    pub any_of: Option<Vec<JSONSchemaProps>>,
    /// A schema the value must not satisfy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 28)]
    pub not: Option<Box<JSONSchemaProps>>,
    /// The schemas of an object's known properties, by name.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 29)]
    pub properties: Option<BTreeMap<String, JSONSchemaProps>>,
    /// The schema of every other property (a map's values), or whether
    /// other properties are allowed; not together with `properties`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 30)]
    pub additional_properties: Option<JSONSchemaPropsOrBool>,
    /// Schemas of properties whose names match a regular expression; not
    /// allowed in CustomResourceDefinitions.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 31)]
    pub pattern_properties: Option<BTreeMap<String, JSONSchemaProps>>,
    /// By property name: a schema the object must satisfy, or properties it
    /// must have, when the property is present; not allowed in
    /// CustomResourceDefinitions.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 32)]
    pub dependencies: Option<BTreeMap<String, JSONSchemaPropsOrStringArray>>,
    /// The schema of items past those `items` lists by position, or whether
    /// there may be any; not allowed in CustomResourceDefinitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 33)]
    pub additional_items: Option<JSONSchemaPropsOrBool>,
    /// Named schemas for `$ref`; not allowed in CustomResourceDefinitions.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 34)]
    pub definitions: Option<BTreeMap<String, JSONSchemaProps>>,
    /// A link to more documentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 35)]
    pub external_docs: Option<ExternalDocumentation>,
    /// An example value, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 36)]
    pub example: Option<JSON>,
    /// Whether `null` is a valid value (otherwise a null field is dropped,
    /// or defaulted).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 37)]
    pub nullable: Option<bool>,
    /// Keeps properties the schema does not declare, in this node and below
    /// (until a node sets it again); only `true` is allowed.
    #[serde(
        default,
        rename = "x-kubernetes-preserve-unknown-fields",
        skip_serializing_if = "Option::is_none"
    )]
    #[api(proto = 38, proto_name = "xKubernetesPreserveUnknownFields")]
    pub x_kubernetes_preserve_unknown_fields: Option<bool>,
    /// The node is a whole Kubernetes object (`apiVersion`, `kind`,
    /// `metadata` are kept and checked); the node must be an object.
    #[serde(
        default,
        rename = "x-kubernetes-embedded-resource",
        skip_serializing_if = "omitempty"
    )]
    #[api(proto = 39, proto_name = "xKubernetesEmbeddedResource")]
    pub x_kubernetes_embedded_resource: Option<bool>,
    /// The node is an integer or a string (like a port or a percentage);
    /// no `type` is given then.
    #[serde(
        default,
        rename = "x-kubernetes-int-or-string",
        skip_serializing_if = "omitempty"
    )]
    #[api(proto = 40, proto_name = "xKubernetesIntOrString")]
    pub x_kubernetes_int_or_string: Option<bool>,
    /// The keys that identify items of a `map` list, each a required
    /// scalar property of the items.
    #[serde(
        default,
        rename = "x-kubernetes-list-map-keys",
        skip_serializing_if = "omitempty"
    )]
    #[api(list_type = "atomic")]
    #[api(proto = 41, proto_name = "xKubernetesListMapKeys")]
    pub x_kubernetes_list_map_keys: Option<Vec<String>>,
    /// How server-side apply merges an array: `atomic` (replaced whole,
    /// the default), `set` (unique scalars) or `map` (items by key).
    #[serde(
        default,
        rename = "x-kubernetes-list-type",
        skip_serializing_if = "Option::is_none"
    )]
    #[api(proto = 42, proto_name = "xKubernetesListType")]
    pub x_kubernetes_list_type: Option<String>,
    /// How server-side apply merges an object: `granular` (by property,
    /// the default) or `atomic` (replaced whole).
    #[serde(
        default,
        rename = "x-kubernetes-map-type",
        skip_serializing_if = "Option::is_none"
    )]
    #[api(proto = 43, proto_name = "xKubernetesMapType")]
    pub x_kubernetes_map_type: Option<String>,
    /// CEL rules the value must satisfy.
    #[serde(
        default,
        rename = "x-kubernetes-validations",
        skip_serializing_if = "omitempty"
    )]
    #[api(list_type = "map", list_map_keys("rule"))]
    #[api(patch_strategy = "merge", patch_merge_key = "rule")]
    #[api(proto = 44, proto_name = "xKubernetesValidations")]
    pub x_kubernetes_validations: Option<Vec<ValidationRule>>,
}

/// A CEL rule a schema node's value must satisfy, with the error to report.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ValidationRule {
    /// The CEL expression; `self` is the node's value, `oldSelf` the previous
    /// value on updates (a transition rule), e.g. `self.min <= self.max`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub rule: String,
    /// The error message when the rule fails (a generic one by default).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub message: Option<String>,
    /// A CEL expression computing the error message; wins over `message`
    /// when it yields a string.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub message_expression: Option<String>,
    /// The reason of the error returned: `FieldValueInvalid` (the default),
    /// `FieldValueForbidden`, `FieldValueRequired` or `FieldValueDuplicate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub reason: Option<String>,
    /// Path, relative to the node, of the field the error is reported at,
    /// e.g. `.spec.replicas`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub field_path: Option<String>,
    /// Evaluates a transition rule also when there is no old value (on
    /// create, or when the field was absent), with `oldSelf` an optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6)]
    pub optional_old_self: Option<bool>,
}

/// A link to documentation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ExternalDocumentation {
    /// What the link leads to.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub description: Option<String>,
    /// The URL.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub url: Option<String>,
}

/// Any JSON value (a default, an example, an enum member), kept as its
/// compact JSON text, as Go keeps its bytes; `None` is JSON `null`.
#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Debug, Default, PartialEq, ApiType)]
#[api(schema = json_schema)]
pub struct JSON {
    /// The JSON text, compact; protobuf carries it as bytes.
    #[api(proto = 1)]
    pub raw: Option<ByteString>,
}

impl JSON {
    /// The value as a JSON tree (`Value::Null` when absent or not JSON).
    pub fn to_value(&self) -> Value {
        self.raw
            .as_ref()
            .and_then(|raw| serde_json::from_slice(&raw.0).ok())
            .unwrap_or(Value::Null)
    }
}

impl From<Value> for JSON {
    fn from(value: Value) -> JSON {
        JSON {
            raw: (!value.is_null()).then(|| ByteString(value.to_string().into_bytes())),
        }
    }
}

impl Serialize for JSON {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text = self
            .raw
            .as_ref()
            .filter(|raw| !raw.0.is_empty())
            .and_then(|raw| std::str::from_utf8(&raw.0).ok())
            .unwrap_or("null");
        let raw = RawValue::from_string(text.to_owned()).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

impl<'de> Deserialize<'de> for JSON {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<JSON, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        let text = compact(raw.get());
        Ok(JSON {
            raw: (text != "null").then(|| ByteString(text.into_bytes())),
        })
    }
}

/// JSON text without the whitespace between tokens (Go compacts what a
/// `MarshalJSON` returns), strings left as they are.
fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if !c.is_ascii_whitespace() {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

/// A JSON value of any type: upstream's definition has no type.
fn json_schema(defs: &mut Definitions) -> Value {
    defs.define(
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
        |_| json!({"description": "Any JSON value: object, array, string, number, boolean or null."}),
    )
}

/// The `items` of an array schema: one schema for every item, or (not in
/// CustomResourceDefinitions) one schema per position. JSON holds the
/// schema object, or the array of schemas.
#[derive(Clone, Debug, Default, PartialEq, ApiType)]
#[api(schema = or_array_schema)]
pub struct JSONSchemaPropsOrArray {
    /// The schema of every item.
    #[api(proto = 1)]
    pub schema: Option<Box<JSONSchemaProps>>,
    /// One schema per position; wins over `schema` in JSON when not empty.
    #[api(proto = 2, proto_name = "jSONSchemas")]
    pub json_schemas: Vec<JSONSchemaProps>,
}

/// Upstream's definition has no type.
fn or_array_schema(defs: &mut Definitions) -> Value {
    defs.define(
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
        |_| json!({"description": "A schema for every item, or an array of schemas, one per position."}),
    )
}

impl Serialize for JSONSchemaPropsOrArray {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if !self.json_schemas.is_empty() {
            return self.json_schemas.serialize(s);
        }
        self.schema.serialize(s)
    }
}

impl<'de> Deserialize<'de> for JSONSchemaPropsOrArray {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct OrArray;
        impl<'de> Visitor<'de> for OrArray {
            type Value = JSONSchemaPropsOrArray;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON schema or an array of JSON schemas")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let schema = JSONSchemaProps::deserialize(MapAccessDeserializer::new(map))?;
                Ok(JSONSchemaPropsOrArray {
                    schema: Some(Box::new(schema)),
                    json_schemas: Vec::new(),
                })
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                let schemas = Vec::deserialize(SeqAccessDeserializer::new(seq))?;
                Ok(JSONSchemaPropsOrArray {
                    schema: None,
                    json_schemas: schemas,
                })
            }

            // Go leaves anything else (null, a scalar) empty.
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(JSONSchemaPropsOrArray::default())
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(JSONSchemaPropsOrArray::default())
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(JSONSchemaPropsOrArray::default())
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(JSONSchemaPropsOrArray::default())
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(JSONSchemaPropsOrArray::default())
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(JSONSchemaPropsOrArray::default())
            }
        }
        d.deserialize_any(OrArray)
    }
}

/// `additionalProperties` and `additionalItems`: a schema the extra members
/// must satisfy, or whether any are allowed. JSON holds the schema object
/// or the boolean.
#[derive(Clone, Debug, Default, PartialEq, ApiType)]
#[api(schema = or_bool_schema)]
pub struct JSONSchemaPropsOrBool {
    /// Whether extra members are allowed; true when a schema is given.
    #[api(proto = 1)]
    pub allows: bool,
    /// The schema extra members must satisfy.
    #[api(proto = 2)]
    pub schema: Option<Box<JSONSchemaProps>>,
}

/// Upstream's definition has no type.
fn or_bool_schema(defs: &mut Definitions) -> Value {
    defs.define(
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
        |_| json!({"description": "A schema for the extra members, or whether any are allowed."}),
    )
}

impl Serialize for JSONSchemaPropsOrBool {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.schema {
            Some(schema) => schema.serialize(s),
            None => s.serialize_bool(self.allows),
        }
    }
}

impl<'de> Deserialize<'de> for JSONSchemaPropsOrBool {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct OrBool;
        impl<'de> Visitor<'de> for OrBool {
            type Value = JSONSchemaPropsOrBool;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("boolean or JSON schema")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let schema = JSONSchemaProps::deserialize(MapAccessDeserializer::new(map))?;
                Ok(JSONSchemaPropsOrBool {
                    allows: true,
                    schema: Some(Box::new(schema)),
                })
            }

            fn visit_bool<E: de::Error>(self, allows: bool) -> Result<Self::Value, E> {
                Ok(JSONSchemaPropsOrBool {
                    allows,
                    schema: None,
                })
            }
        }
        d.deserialize_any(OrBool)
    }
}

/// A `dependencies` entry: a schema the object must satisfy, or properties
/// it must have. JSON holds the schema object or the string array.
#[derive(Clone, Debug, Default, PartialEq, ApiType)]
#[api(schema = or_string_array_schema)]
pub struct JSONSchemaPropsOrStringArray {
    /// The schema the object must satisfy.
    #[api(proto = 1)]
    pub schema: Option<Box<JSONSchemaProps>>,
    /// Properties the object must have; wins over `schema` in JSON when not
    /// empty.
    #[api(proto = 2)]
    pub property: Vec<String>,
}

/// Upstream's definition has no type.
fn or_string_array_schema(defs: &mut Definitions) -> Value {
    defs.define(
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
        |_| json!({"description": "A schema the object must satisfy, or property names it must have."}),
    )
}

impl Serialize for JSONSchemaPropsOrStringArray {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if !self.property.is_empty() {
            return self.property.serialize(s);
        }
        self.schema.serialize(s)
    }
}

impl<'de> Deserialize<'de> for JSONSchemaPropsOrStringArray {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct OrStringArray;
        impl<'de> Visitor<'de> for OrStringArray {
            type Value = JSONSchemaPropsOrStringArray;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON schema or an array of property names")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let schema = JSONSchemaProps::deserialize(MapAccessDeserializer::new(map))?;
                Ok(JSONSchemaPropsOrStringArray {
                    schema: Some(Box::new(schema)),
                    property: Vec::new(),
                })
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                let property = Vec::deserialize(SeqAccessDeserializer::new(seq))?;
                Ok(JSONSchemaPropsOrStringArray {
                    schema: None,
                    property,
                })
            }

            // Go leaves anything else (null, a scalar) empty.
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(JSONSchemaPropsOrStringArray::default())
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(JSONSchemaPropsOrStringArray::default())
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(JSONSchemaPropsOrStringArray::default())
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(JSONSchemaPropsOrStringArray::default())
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(JSONSchemaPropsOrStringArray::default())
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(JSONSchemaPropsOrStringArray::default())
            }
        }
        d.deserialize_any(OrStringArray)
    }
}

/// A Go `float64` as `encoding/json` writes it: integral values without a
/// fraction (`100`, not `100.0`); other values in the shortest form that
/// reads back the same (exactly Go's text between 1e-5 and 1e17, the same
/// number outside).
fn go_float<S: Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match *value {
        Some(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => s.serialize_i64(v as i64),
        Some(v) => s.serialize_f64(v),
        None => s.serialize_none(),
    }
}
