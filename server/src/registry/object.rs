//! [`Object`]: any kind's object as the generic request path handles it — the
//! kind's own Rust value behind [`DynObject`] — and its JSON form.

use std::fmt;

use kapi_runtime::DynObject;
use kapi_runtime::meta::ObjectMeta;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// An object of some registered kind.
#[derive(Clone)]
pub struct Object(Box<dyn DynObject>);

impl Object {
    /// Wraps a typed object.
    pub fn new(object: Box<dyn DynObject>) -> Object {
        Object(object)
    }

    /// The typed object.
    pub fn typed(&self) -> &dyn DynObject {
        &*self.0
    }

    /// The typed object, mutable.
    pub fn typed_mut(&mut self) -> &mut dyn DynObject {
        &mut *self.0
    }

    /// `kind`.
    pub fn kind(&self) -> &'static str {
        self.0.info().kind
    }

    /// `apiVersion`.
    pub fn api_version(&self) -> String {
        self.0.info().api_version()
    }

    /// `metadata`.
    pub fn metadata(&self) -> &ObjectMeta {
        self.0.metadata()
    }

    /// `metadata`, mutable.
    pub fn metadata_mut(&mut self) -> &mut ObjectMeta {
        self.0.metadata_mut()
    }

    /// The object as a JSON value, `kind` and `apiVersion` first (patches and
    /// printer-column paths, which upstream also evaluates on JSON).
    pub fn to_value(&self) -> Result<Value, String> {
        let Value::Object(fields) = self.0.to_json_value()? else {
            return Err(format!("a {} is not a JSON object", self.kind()));
        };
        let mut map = Map::with_capacity(fields.len() + 2);
        map.insert("kind".into(), Value::String(self.kind().to_owned()));
        map.insert("apiVersion".into(), Value::String(self.api_version()));
        map.extend(fields);
        Ok(Value::Object(map))
    }

    /// The text of a field selector's field (`metadata.name`, `spec.nodeName`).
    pub fn field_text(&self, path: &str) -> Option<String> {
        self.0.field_text(path)
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for Object {
    fn eq(&self, other: &Object) -> bool {
        self.0.object_eq(other.typed())
    }
}

/// The JSON form: Go's order, `kind`, `apiVersion`, then the kind's own fields
/// (`metadata` first).
#[derive(Serialize)]
struct Wire<'a> {
    kind: &'a str,
    #[serde(rename = "apiVersion")]
    api_version: &'a str,
    #[serde(flatten)]
    object: &'a dyn erased_serde::Serialize,
}

impl Serialize for Object {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Wire {
            kind: self.kind(),
            api_version: &self.api_version(),
            object: self.0.as_serialize(),
        }
        .serialize(s)
    }
}
