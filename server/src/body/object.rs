//! [`Object`]: any kind's object as the generic request path handles it — the
//! kind's own Rust value behind [`DynObject`] — and its JSON form.

use std::fmt;

use kapi_runtime::meta::ObjectMeta;
use kapi_runtime::object::WithTypeMeta;
use kapi_runtime::{DynObject, Resource};
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

    /// The typed object, taken out.
    pub fn into_typed(self) -> Box<dyn DynObject> {
        self.0
    }

    /// The typed object.
    pub fn typed(&self) -> &dyn DynObject {
        &*self.0
    }

    /// The typed object, mutable.
    pub fn typed_mut(&mut self) -> &mut dyn DynObject {
        &mut *self.0
    }

    /// The object as the kind's type `T`, if it is one (as upstream's
    /// plugins assert `*api.Pod`).
    pub fn downcast_ref<T: Resource>(&self) -> Option<&T> {
        (*self.0).downcast_ref()
    }

    /// The object as the kind's type `T`, mutable, if it is one.
    pub fn downcast_mut<T: Resource>(&mut self) -> Option<&mut T> {
        (*self.0).downcast_mut()
    }

    /// `kind`.
    pub fn kind(&self) -> &'static str {
        self.0.info().kind
    }

    /// `apiVersion`.
    pub fn api_version(&self) -> &'static str {
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
        map.insert(
            "apiVersion".into(),
            Value::String(self.api_version().to_owned()),
        );
        map.extend(fields);
        Ok(Value::Object(map))
    }

    /// Appends the object's JSON (`kind`, `apiVersion`, `metadata`, ...).
    pub fn write_json(&self, out: &mut Vec<u8>) -> Result<(), String> {
        self.0.write_json(out)
    }

    /// The object's JSON.
    pub fn to_json(&self) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(1024);
        self.write_json(&mut out)?;
        Ok(out)
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

/// The JSON (or YAML) form in Go's order: `kind`, `apiVersion`, then the kind's
/// own fields (`metadata` first). The kind's type serializes as a struct; the
/// type meta is written as that struct's first two fields, so the object goes to
/// the output serializer in one pass (serde's `flatten` would route every field
/// through a map and cost as much again as the serialization itself).
impl Serialize for Object {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.writes_type_meta() {
            return erased_serde::serialize(self.0.as_serialize(), s);
        }
        let typed = WithTypeMeta::new(s, self.kind(), self.api_version());
        erased_serde::serialize(self.0.as_serialize(), typed)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use kapi_api_types::core::v1::ConfigMap;

    use super::*;

    #[test]
    fn json_has_type_meta_first_and_round_trips() {
        let cm: ConfigMap = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "x", "resourceVersion": "9"},
            "data": {"a": "1"}
        }))
        .unwrap();
        let object = Object::new(Box::new(cm));
        let json = serde_json::to_string(&object).unwrap();
        assert_eq!(String::from_utf8(object.to_json().unwrap()).unwrap(), json);
        assert_eq!(
            json,
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","resourceVersion":"9","creationTimestamp":null},"data":{"a":"1"}}"#
        );
        assert_eq!(
            serde_json::to_value(&object).unwrap(),
            object.to_value().unwrap()
        );
        let yaml = serde_saphyr::to_string(&object).unwrap();
        assert!(
            yaml.starts_with("kind: ConfigMap\napiVersion: v1\nmetadata:\n"),
            "{yaml}"
        );
        assert_eq!(object.field_text("data.a").as_deref(), Some("1"));
        assert_eq!(object.field_text("metadata.name").as_deref(), Some("x"));
    }
}
