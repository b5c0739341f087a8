//! [`Object`]: any kind's object as the generic request path handles it — typed
//! metadata, the rest as JSON — and its storage encoding.

use bytes::Bytes;
use kapi_runtime::meta::ObjectMeta;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// An object of some kind: `kind`, `apiVersion`, `metadata` and the rest.
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    /// `kind`.
    pub kind: String,
    /// `apiVersion`.
    pub api_version: String,
    /// `metadata`.
    pub metadata: ObjectMeta,
    /// Every other top-level field (`spec`, `status`, `data`, ...), in wire order.
    pub body: Map<String, Value>,
}

impl Object {
    /// Splits a JSON object into metadata and the rest; the caller checks
    /// `kind`/`apiVersion`.
    pub fn from_value(value: Value) -> Result<Object, String> {
        let Value::Object(mut map) = value else {
            return Err("the object must be a JSON object".to_owned());
        };
        let kind = take_string(&mut map, "kind")?;
        let api_version = take_string(&mut map, "apiVersion")?;
        let metadata = match map.shift_remove("metadata") {
            None | Some(Value::Null) => ObjectMeta::default(),
            Some(meta) => serde_json::from_value(meta).map_err(|e| format!("metadata: {e}"))?,
        };
        Ok(Object {
            kind,
            api_version,
            metadata,
            body: map,
        })
    }

    /// The object as one JSON map without `kind`/`apiVersion` (what kinds decode).
    pub fn typed_input(&self) -> Result<Map<String, Value>, String> {
        let mut map = Map::with_capacity(self.body.len() + 1);
        map.insert(
            "metadata".into(),
            serde_json::to_value(&self.metadata).map_err(|e| e.to_string())?,
        );
        map.extend(self.body.iter().map(|(k, v)| (k.clone(), v.clone())));
        Ok(map)
    }

    /// Rebuilds the object from a kind's typed output (metadata included).
    pub fn from_typed_output(
        kind: &str,
        api_version: &str,
        mut map: Map<String, Value>,
    ) -> Result<Object, String> {
        let metadata = match map.shift_remove("metadata") {
            Some(meta) => serde_json::from_value(meta).map_err(|e| e.to_string())?,
            None => ObjectMeta::default(),
        };
        Ok(Object {
            kind: kind.to_owned(),
            api_version: api_version.to_owned(),
            metadata,
            body: map,
        })
    }

    /// The object as JSON without its resourceVersion (the store's revision is
    /// the resourceVersion, as in etcd): what the storage codec starts from.
    pub(super) fn to_storage_json(&self) -> Result<Bytes, String> {
        // Only the metadata is copied, not the (possibly large) body.
        let metadata = ObjectMeta {
            resource_version: None,
            ..self.metadata.clone()
        };
        serde_json::to_vec(&Wire {
            object: self,
            metadata: &metadata,
        })
        .map(Bytes::from)
        .map_err(|e| e.to_string())
    }

    /// The object as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The value of a top-level field path such as `spec.nodeName`, as text
    /// (for field selectors and printer columns).
    pub fn field_text(&self, path: &str) -> Option<String> {
        match path {
            "metadata.name" => return self.metadata.name.clone(),
            "metadata.namespace" => return self.metadata.namespace.clone(),
            _ => {}
        }
        let mut parts = path.split('.');
        let mut value = self.body.get(parts.next()?)?;
        for part in parts {
            value = value.get(part)?;
        }
        match value {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    }
}

fn take_string(map: &mut Map<String, Value>, field: &str) -> Result<String, String> {
    match map.shift_remove(field) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!("{field} must be a string, got {other}")),
    }
}

/// An object with the metadata to write in its place.
struct Wire<'a> {
    object: &'a Object,
    metadata: &'a ObjectMeta,
}

impl Serialize for Wire<'_> {
    /// Go's order: kind, apiVersion, metadata, then the kind's own fields.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let body = &self.object.body;
        let mut map = s.serialize_map(Some(body.len() + 3))?;
        map.serialize_entry("kind", &self.object.kind)?;
        map.serialize_entry("apiVersion", &self.object.api_version)?;
        map.serialize_entry("metadata", self.metadata)?;
        for (k, v) in body {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl Serialize for Object {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Wire {
            object: self,
            metadata: &self.metadata,
        }
        .serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_json_is_in_wire_order_without_resource_version() {
        let v = serde_json::json!({"data": {"a": "1"}, "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "resourceVersion": "9"}});
        let o = Object::from_value(v).unwrap();
        let stored = o.to_storage_json().unwrap();
        assert_eq!(
            std::str::from_utf8(&stored).unwrap(),
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","creationTimestamp":null},"data":{"a":"1"}}"#
        );
        assert_eq!(o.field_text("data.a").as_deref(), Some("1"));
    }

    #[test]
    fn bad_shapes_are_errors() {
        assert!(Object::from_value(serde_json::json!([1])).is_err());
        assert!(Object::from_value(serde_json::json!({"kind": 5})).is_err());
        assert!(Object::from_value(serde_json::json!({"metadata": {"labels": "x"}})).is_err());
    }
}
