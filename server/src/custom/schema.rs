//! A custom resource version's structural schema (its `openAPIV3Schema`) as
//! the request path uses it: which fields exist (pruning, and the unknown
//! fields `fieldValidation` reports) and their defaults.
//!
//! Value validation against the schema (types, formats, bounds, CEL rules)
//! is not done here yet.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// One node of a structural schema.
#[derive(Debug, Default)]
pub struct Structural {
    /// The properties of an object.
    properties: BTreeMap<String, Structural>,
    /// The schema of every value of a map (`additionalProperties`).
    additional: Option<Box<Structural>>,
    /// The schema of a list's items.
    items: Option<Box<Structural>>,
    /// `x-kubernetes-preserve-unknown-fields`: fields the schema does not name
    /// are kept.
    preserve_unknown: bool,
    /// `x-kubernetes-embedded-resource`: an object with its own `apiVersion`,
    /// `kind` and `metadata`.
    embedded: bool,
    /// `nullable`.
    nullable: bool,
    /// `default`.
    default: Option<Value>,
}

impl Structural {
    /// The structural form of an `openAPIV3Schema` (`None`: a version with no
    /// schema keeps every field).
    pub fn of(schema: &Value) -> Structural {
        let Value::Object(schema) = schema else {
            return Structural::default();
        };
        let node = |key: &str| schema.get(key).filter(|v| v.is_object()).map(Structural::of);
        let flag = |key: &str| schema.get(key).and_then(Value::as_bool).unwrap_or(false);
        Structural {
            properties: schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.iter().map(|(k, v)| (k.clone(), Structural::of(v))).collect())
                .unwrap_or_default(),
            additional: node("additionalProperties").map(Box::new),
            items: node("items").map(Box::new),
            preserve_unknown: flag("x-kubernetes-preserve-unknown-fields")
                // A schema with no properties and no type constraint at all
                // (an empty schema) keeps what it is given, as upstream.
                || (schema.get("type").is_none()
                    && schema.get("properties").is_none()
                    && schema.get("additionalProperties").is_none()
                    && schema.get("items").is_none()
                    && !flag("x-kubernetes-embedded-resource")),
            embedded: flag("x-kubernetes-embedded-resource"),
            nullable: flag("nullable"),
            default: schema.get("default").cloned(),
        }
    }

    /// Removes from the top level of a custom object (without `apiVersion`,
    /// `kind` and `metadata`) what the schema does not name, recording each
    /// removed field's path (`spec.bogus`, `extra`) in `unknown`.
    pub fn prune_root(&self, object: &mut Map<String, Value>, unknown: &mut Vec<String>) {
        self.prune_map(object, "", unknown);
    }

    fn prune_map(&self, map: &mut Map<String, Value>, path: &str, unknown: &mut Vec<String>) {
        let join = |key: &str| {
            if path.is_empty() {
                key.to_owned()
            } else {
                format!("{path}.{key}")
            }
        };
        let mut removed = Vec::new();
        for (key, value) in map.iter_mut() {
            if path.is_empty() && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if self.embedded && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if let Some(property) = self.properties.get(key) {
                property.prune(value, &join(key), unknown);
            } else if let Some(values) = &self.additional {
                values.prune(value, &join(key), unknown);
            } else if !self.preserve_unknown {
                removed.push(key.clone());
                unknown.push(join(key));
            }
        }
        for key in removed {
            map.shift_remove(&key);
        }
    }

    fn prune(&self, value: &mut Value, path: &str, unknown: &mut Vec<String>) {
        match value {
            Value::Object(map) => self.prune_map(map, path, unknown),
            Value::Array(items) => {
                if let Some(schema) = &self.items {
                    for (i, item) in items.iter_mut().enumerate() {
                        schema.prune(item, &format!("{path}[{i}]"), unknown);
                    }
                }
            }
            _ => {}
        }
    }

    /// Fills in the schema's defaults where the object leaves a field out
    /// (or sets it to `null` where the field is not nullable), top down.
    pub fn default_root(&self, object: &mut Map<String, Value>) {
        self.default_map(object);
    }

    fn default_map(&self, map: &mut Map<String, Value>) {
        for (key, property) in &self.properties {
            match map.get_mut(key) {
                None => {
                    if let Some(default) = &property.default {
                        map.insert(key.clone(), default.clone());
                    }
                }
                Some(Value::Null) if !property.nullable => {
                    if let Some(default) = &property.default {
                        map.insert(key.clone(), default.clone());
                    }
                }
                Some(_) => {}
            }
            if let Some(value) = map.get_mut(key) {
                property.default_value(value);
            }
        }
        if let Some(values) = &self.additional {
            for value in map.values_mut() {
                values.default_value(value);
            }
        }
    }

    fn default_value(&self, value: &mut Value) {
        match value {
            Value::Object(map) => self.default_map(map),
            Value::Array(items) => {
                if let Some(schema) = &self.items {
                    for item in items {
                        schema.default_value(item);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn widget_schema() -> Structural {
        Structural::of(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "size": {"type": "integer"},
                    "color": {"type": "string", "default": "red"},
                    "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "ports": {"type": "array", "items": {"type": "object", "properties": {
                        "port": {"type": "integer"}}}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}}
                }},
                "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}
            }
        }))
    }

    #[test]
    fn pruning_names_each_removed_field() {
        let mut object = json!({
            "spec": {"size": 1, "bogus": true, "config": {"any": {"thing": 1}},
                     "ports": [{"port": 1, "name": "x"}], "labels": {"a": "b"}},
            "extra": 1
        });
        let mut unknown = Vec::new();
        widget_schema().prune_root(object.as_object_mut().unwrap(), &mut unknown);
        assert_eq!(unknown, ["spec.bogus", "spec.ports[0].name", "extra"]);
        assert_eq!(
            object,
            json!({"spec": {"size": 1, "config": {"any": {"thing": 1}},
                            "ports": [{"port": 1}], "labels": {"a": "b"}}})
        );
    }

    #[test]
    fn defaults_fill_absent_and_null_fields() {
        let schema = widget_schema();
        for given in [json!({"spec": {}}), json!({"spec": {"color": null}})] {
            let mut object = given;
            schema.default_root(object.as_object_mut().unwrap());
            assert_eq!(object, json!({"spec": {"color": "red"}}));
        }
        let mut object = json!({"spec": {"color": "blue"}});
        schema.default_root(object.as_object_mut().unwrap());
        assert_eq!(object, json!({"spec": {"color": "blue"}}));
    }
}
