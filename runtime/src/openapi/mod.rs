//! OpenAPI schemas of the API types, generated from the structs: every struct
//! deriving `ApiType` describes itself ([`OpenApi`]) with its doc comments as
//! descriptions, its fields' types, the properties it requires and the
//! `x-kubernetes-*` merge extensions declared on its fields. Named types become
//! definitions under Kubernetes' definition names (`io.k8s.api.core.v1.Pod`), so
//! that documents built from them line up with kube-apiserver's.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

/// The definitions collected while describing types, by definition name.
#[derive(Debug, Default)]
pub struct Definitions {
    defs: BTreeMap<String, Value>,
    /// The definitions that are kinds (see [`Definitions::define_kind`]).
    kinds: BTreeSet<String>,
}

impl Definitions {
    /// No definitions yet.
    pub fn new() -> Definitions {
        Definitions::default()
    }

    /// A `$ref` to the definition `name`, building it with `build` the first
    /// time (a type that refers to itself, directly or not, is built once).
    pub fn define(&mut self, name: &str, build: impl FnOnce(&mut Definitions) -> Value) -> Value {
        // Every type calls this with its own closure: the body is shared.
        let mut build = Some(build);
        self.define_dyn(name, &mut |defs| {
            build.take().map_or(Value::Null, |b| b(defs))
        })
    }

    fn define_dyn(
        &mut self,
        name: &str,
        build: &mut dyn FnMut(&mut Definitions) -> Value,
    ) -> Value {
        if !self.defs.contains_key(name) {
            // A placeholder first: recursion through `build` sees the name taken.
            self.defs.insert(name.to_owned(), Value::Null);
            let schema = build(self);
            self.defs.insert(name.to_owned(), schema);
        }
        reference(name)
    }

    /// [`Definitions::define`] for a kind: its objects, embedded ones too,
    /// carry `apiVersion` and `kind`, which the documents add to its
    /// definition and decoding accepts.
    pub fn define_kind(
        &mut self,
        name: &str,
        build: impl FnOnce(&mut Definitions) -> Value,
    ) -> Value {
        if !self.kinds.contains(name) {
            self.kinds.insert(name.to_owned());
        }
        self.define(name, build)
    }

    /// Whether the definition `name` is a kind's.
    pub fn is_kind(&self, name: &str) -> bool {
        self.kinds.contains(name)
    }

    /// The definition `name`, if described.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.defs.get(name)
    }

    /// The definition `name`, mutable (to add kind-level extensions).
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        self.defs.get_mut(name)
    }

    /// Adds or replaces a definition.
    pub fn insert(&mut self, name: String, schema: Value) {
        self.defs.insert(name, schema);
    }

    /// Every definition, ordered by name.
    pub fn into_inner(self) -> BTreeMap<String, Value> {
        self.defs
    }

    /// Every definition, ordered by name.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.defs.iter()
    }

    /// Every definition, mutable (the documents drop the CRD keywords of all).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.defs.values_mut()
    }
}

/// `{"$ref": "#/definitions/<name>"}`.
pub fn reference(name: &str) -> Value {
    json!({ "$ref": format!("#/definitions/{name}") })
}

/// The definition name referred to by a `$ref` schema.
pub fn referenced(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str()?.strip_prefix("#/definitions/")
}

/// A type with an OpenAPI schema.
pub trait OpenApi {
    /// The schema of a value: inline for scalars and containers, a `$ref` for a
    /// named type, whose definition is added to `defs`.
    fn schema(defs: &mut Definitions) -> Value;

    /// The properties (and required property names) this type contributes to a
    /// struct that flattens it (`#[serde(flatten)]`); none for non-structs.
    fn flattened(_defs: &mut Definitions) -> (Map<String, Value>, Vec<String>) {
        (Map::new(), Vec::new())
    }
}

/// The definition name of a struct, from the Rust module it is declared in:
/// `kapi_api_types::<group>::<version>::...` is `io.k8s.api.<group>.<version>`
/// (the module names follow k8s.io/api's package directories), except the two
/// groups whose Go types live outside k8s.io/api (`apiextensions`, in
/// apiextensions-apiserver, and `apiregistration`, in kube-aggregator), the
/// runtime's meta types are apimachinery's `meta/v1`, and any other crate's
/// types are named by their module path.
pub fn definition_name(module_path: &str, name: &str) -> String {
    let mut parts = module_path.split("::");
    match (parts.next(), parts.next(), parts.next()) {
        (Some("kapi_api_types"), Some("apiextensions"), Some(version)) => {
            format!("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{version}.{name}")
        }
        (Some("kapi_api_types"), Some("apiregistration"), Some(version)) => {
            format!("io.k8s.kube-aggregator.pkg.apis.apiregistration.{version}.{name}")
        }
        (Some("kapi_api_types"), Some(group), Some(version)) => {
            format!("io.k8s.api.{group}.{version}.{name}")
        }
        (Some("kapi_runtime"), Some("meta"), _) => {
            format!("io.k8s.apimachinery.pkg.apis.meta.v1.{name}")
        }
        _ => format!("{}.{name}", module_path.replace("::", ".")),
    }
}

/// A property: the field type's schema with the field's description and
/// extensions. A `$ref` keeps its siblings, as kube-apiserver's documents do.
pub fn property(mut schema: Value, description: &str, extensions: &[(&str, Value)]) -> Value {
    if let Value::Object(map) = &mut schema {
        if !description.is_empty() {
            map.insert("description".into(), Value::String(description.to_owned()));
        }
        for (key, value) in extensions {
            map.insert((*key).to_owned(), value.clone());
        }
    }
    schema
}

/// The key under which a property carries the schema keywords of its
/// rules for the CustomResourceDefinition of its kind; the API documents
/// leave it out ([`without_crd_keywords`]).
pub const CRD_KEYWORDS: &str = "x-kapi-crd";

/// The pattern an RFC 1123 label matches, as a CRD schema checks it.
pub const DNS1123_LABEL_PATTERN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

/// The pattern an RFC 1123 subdomain matches, as a CRD schema checks it.
pub const DNS1123_SUBDOMAIN_PATTERN: &str =
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

/// `property` with the CRD schema keywords of its field's rules.
pub fn with_crd_keywords(mut property: Value, keywords: &[(&str, Value)]) -> Value {
    if let Value::Object(map) = &mut property {
        let keywords: Map<String, Value> = keywords
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        map.insert(CRD_KEYWORDS.into(), Value::Object(keywords));
    }
    property
}

/// A number as JSON: whole numbers as integers (`1`, not `1.0`).
pub fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

/// `schema` without the CRD keywords of its properties, at any depth.
pub fn without_crd_keywords(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            map.remove(CRD_KEYWORDS);
            map.values_mut().for_each(without_crd_keywords);
        }
        Value::Array(items) => items.iter_mut().for_each(without_crd_keywords),
        _ => {}
    }
}

/// An object schema with properties.
pub fn object(description: &str, properties: Map<String, Value>, required: Vec<String>) -> Value {
    let mut map = Map::new();
    if !description.is_empty() {
        map.insert("description".into(), Value::String(description.to_owned()));
    }
    map.insert("type".into(), Value::String("object".into()));
    // A struct with no fields has no `properties` (as kube-openapi writes it): an
    // empty map would not survive a client's decode-encode round trip.
    if !properties.is_empty() {
        map.insert("properties".into(), Value::Object(properties));
    }
    if !required.is_empty() {
        map.insert(
            "required".into(),
            Value::Array(required.into_iter().map(Value::String).collect()),
        );
    }
    Value::Object(map)
}

macro_rules! scalar {
    ($($t:ty => $schema:tt),*) => {
        $(impl OpenApi for $t {
            fn schema(_: &mut Definitions) -> Value {
                json!($schema)
            }
        })*
    };
}

scalar!(
    String => {"type": "string"},
    bool => {"type": "boolean"},
    i32 => {"type": "integer", "format": "int32"},
    i64 => {"type": "integer", "format": "int64"},
    u32 => {"type": "integer", "format": "int32"},
    u64 => {"type": "integer", "format": "int64"},
    f32 => {"type": "number", "format": "float"},
    f64 => {"type": "number", "format": "double"},
    Value => {"type": "object"}
);

impl<T: OpenApi> OpenApi for Option<T> {
    fn schema(defs: &mut Definitions) -> Value {
        T::schema(defs)
    }

    fn flattened(defs: &mut Definitions) -> (Map<String, Value>, Vec<String>) {
        // An optional flattened struct requires nothing of its parent.
        (T::flattened(defs).0, Vec::new())
    }
}

impl<T: OpenApi> OpenApi for Box<T> {
    fn schema(defs: &mut Definitions) -> Value {
        T::schema(defs)
    }

    fn flattened(defs: &mut Definitions) -> (Map<String, Value>, Vec<String>) {
        T::flattened(defs)
    }
}

impl<T: OpenApi> OpenApi for Vec<T> {
    fn schema(defs: &mut Definitions) -> Value {
        json!({ "type": "array", "items": T::schema(defs) })
    }
}

impl<T: OpenApi> OpenApi for BTreeMap<String, T> {
    fn schema(defs: &mut Definitions) -> Value {
        json!({ "type": "object", "additionalProperties": T::schema(defs) })
    }
}

/// A named type whose schema is a fixed definition of apimachinery.
macro_rules! named {
    ($($t:ty => $name:literal $schema:tt),*) => {
        $(impl OpenApi for $t {
            fn schema(defs: &mut Definitions) -> Value {
                defs.define($name, |_| json!($schema))
            }
        })*
    };
}

named!(
    crate::intstr::Quantity => "io.k8s.apimachinery.pkg.api.resource.Quantity"
        {"type": "string"},
    crate::intstr::IntOrString => "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
        {"type": "string", "format": "int-or-string"}
);

impl OpenApi for crate::bytes::ByteString {
    fn schema(_: &mut Definitions) -> Value {
        json!({"type": "string", "format": "byte"})
    }
}

const API_VERSION_DOC: &str = "The versioned schema of this representation of an object, `group/version` (`v1` for the core group).";
const KIND_DOC: &str = "The REST kind of this object, in CamelCase.";

/// The `apiVersion` and `kind` properties of an object with type meta (a
/// kind's, or an object embedded in a custom resource).
pub fn type_meta_properties() -> [(&'static str, Value); 2] {
    [
        ("apiVersion", type_meta_property(API_VERSION_DOC)),
        ("kind", type_meta_property(KIND_DOC)),
    ]
}

fn type_meta_property(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_module_layout() {
        assert_eq!(
            definition_name("kapi_api_types::core::v1::pod::container", "Container"),
            "io.k8s.api.core.v1.Container"
        );
        assert_eq!(
            definition_name("kapi_runtime::meta::object_meta", "ObjectMeta"),
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        assert_eq!(
            definition_name("widget::types", "WidgetSpec"),
            "widget.types.WidgetSpec"
        );
    }

    #[test]
    fn groups_outside_k8s_io_api_keep_their_go_packages() {
        assert_eq!(
            definition_name(
                "kapi_api_types::apiextensions::v1::customresourcedefinition",
                "CustomResourceDefinition"
            ),
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
        );
        assert_eq!(
            definition_name(
                "kapi_api_types::apiregistration::v1::apiservice",
                "APIService"
            ),
            "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService"
        );
        assert_eq!(
            definition_name(
                "kapi_api_types::admissionregistration::v1",
                "MatchCondition"
            ),
            "io.k8s.api.admissionregistration.v1.MatchCondition"
        );
    }

    #[test]
    fn containers_and_refs() {
        let mut defs = Definitions::new();
        let schema = <Option<Vec<crate::meta::Time>>>::schema(&mut defs);
        assert_eq!(
            schema,
            json!({"type": "array", "items": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}})
        );
        assert_eq!(
            defs.get("io.k8s.apimachinery.pkg.apis.meta.v1.Time"),
            Some(&json!({"type": "string", "format": "date-time"}))
        );
    }
}
