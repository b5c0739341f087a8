//! [`CustomObject`]: an object of a custom resource, as the one request path
//! holds any object. Its metadata is the typed `ObjectMeta` every kind has
//! (so the generic strategy, selectors and owner references work on it
//! unchanged); the rest is JSON, shaped by the version's schema. It is
//! written as upstream writes unstructured objects: every key sorted.

use std::any::Any;
use std::sync::Arc;

use kapi_runtime::DynObject;
use kapi_runtime::ResourceInfo;
use kapi_runtime::meta::ObjectMeta;
use kapi_runtime::validation::FieldErrors;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::cel::{EVAL_STACK, Mode, with_stack};
use super::kind::Version;

/// An object of a custom resource.
#[derive(Clone, Debug)]
pub struct CustomObject {
    /// The version the object is in.
    pub(super) version: Arc<Version>,
    /// `metadata`.
    pub(super) metadata: ObjectMeta,
    /// Every other top-level field (`spec`, `status`, ...), without
    /// `apiVersion`, `kind` and `metadata`.
    pub(super) content: Map<String, Value>,
}

impl CustomObject {
    /// Validates the object against its version's schema: the structural
    /// checks (not repeated on values an update leaves unchanged from
    /// `old`), then, unless those found an error that blocks them, the CEL
    /// rules.
    pub(super) fn validate_schema(
        &self,
        info: &ResourceInfo,
        old: Option<&CustomObject>,
        errs: &mut FieldErrors,
    ) {
        let schema = &self.version.schema;
        schema.validate_root(&self.content, old.map(|o| &o.content), errs);
        if !schema.has_compiled_rules() || super::schema::blocks_rules(errs) {
            return;
        }
        let new = self.rule_input(info);
        let old = old.map(|o| o.rule_input(info));
        with_stack(EVAL_STACK, || {
            schema.validate_rules_root(&new, old.as_ref(), Mode::Decide, errs);
        });
    }

    /// The failures of the rules an update does not run again on the values
    /// it left unchanged: upstream answers them as warnings.
    fn ratcheted_failures(&self, old: &CustomObject) -> Vec<String> {
        let schema = &self.version.schema;
        if !schema.has_compiled_rules() {
            return Vec::new();
        }
        let info = self.version.info;
        let mut errs = FieldErrors::default();
        let (new, old) = (self.rule_input(info), old.rule_input(info));
        with_stack(EVAL_STACK, || {
            schema.validate_rules_root(&new, Some(&old), Mode::Ratcheted, &mut errs);
        });
        errs.0.iter().map(ToString::to_string).collect()
    }

    /// The object as its schema's root CEL rules see it: its content with
    /// `apiVersion`, `kind` and the metadata they may read.
    pub(super) fn rule_input(&self, info: &ResourceInfo) -> Value {
        let mut map = Map::with_capacity(self.content.len() + 3);
        let api_version = if info.group.is_empty() {
            info.version.to_owned()
        } else {
            format!("{}/{}", info.group, info.version)
        };
        map.insert("apiVersion".into(), Value::String(api_version));
        map.insert("kind".into(), Value::String(info.kind.to_owned()));
        let mut metadata = Map::new();
        if let Some(name) = &self.metadata.name {
            metadata.insert("name".into(), Value::String(name.clone()));
        }
        if let Some(generate_name) = &self.metadata.generate_name {
            metadata.insert("generateName".into(), Value::String(generate_name.clone()));
        }
        map.insert("metadata".into(), Value::Object(metadata));
        map.extend(self.content.iter().map(|(k, v)| (k.clone(), v.clone())));
        Value::Object(map)
    }

    /// The object as `version` (the conversion of strategy `None`: only
    /// `apiVersion` changes).
    pub(super) fn into_version(mut self, version: Arc<Version>) -> CustomObject {
        self.version = version;
        self
    }

    fn status_subresource(&self) -> bool {
        self.version.info.status_subresource
    }

    /// The content without what a write through the main endpoint does not
    /// change (status, for a kind with a `/status` subresource).
    fn desired(&self) -> impl Iterator<Item = (&String, &Value)> {
        let skip_status = self.status_subresource();
        self.content
            .iter()
            .filter(move |(k, _)| !(skip_status && *k == "status"))
    }

    /// The value at a dotted path (`spec.color`) of the content.
    fn at(&self, path: &str) -> Option<&Value> {
        let mut parts = path.split('.');
        let mut value = self.content.get(parts.next()?)?;
        for part in parts {
            value = value.as_object()?.get(part)?;
        }
        Some(value)
    }
}

/// Serializes a JSON value with every object's keys sorted, as Go writes a
/// `map[string]interface{}` (without copying the value).
struct Sorted<'a>(&'a Value);

impl Serialize for Sorted<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => {
                let mut keys: Vec<(&String, &Value)> = map.iter().collect();
                keys.sort_unstable_by(|a, b| a.0.cmp(b.0));
                let mut out = s.serialize_map(Some(keys.len()))?;
                for (k, v) in keys {
                    out.serialize_entry(k, &Sorted(v))?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&Sorted(item))?;
                }
                out.end()
            }
            other => other.serialize(s),
        }
    }
}

/// The whole object (`type_meta`: with `apiVersion` and `kind`), sorted.
struct Whole<'a> {
    object: &'a CustomObject,
    metadata: Value,
    type_meta: bool,
}

impl Serialize for Whole<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let info = self.object.version.info;
        let api_version = Value::String(info.group_version.to_owned());
        let kind = Value::String(info.kind.to_owned());
        let mut keys: Vec<(&str, &Value)> = self
            .object
            .content
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        keys.push(("metadata", &self.metadata));
        if self.type_meta {
            keys.push(("apiVersion", &api_version));
            keys.push(("kind", &kind));
        }
        keys.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut out = s.serialize_map(Some(keys.len()))?;
        for (k, v) in keys {
            out.serialize_entry(k, &Sorted(v))?;
        }
        out.end()
    }
}

/// The whole object, `apiVersion` and `kind` included, keys sorted.
impl Serialize for CustomObject {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let metadata = serde_json::to_value(&self.metadata).map_err(serde::ser::Error::custom)?;
        Whole {
            object: self,
            metadata,
            type_meta: true,
        }
        .serialize(s)
    }
}

impl DynObject for CustomObject {
    fn info(&self) -> &'static ResourceInfo {
        self.version.info
    }

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }

    fn clone_object(&self) -> Box<dyn DynObject> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }

    fn as_serialize(&self) -> &dyn erased_serde::Serialize {
        self
    }

    fn writes_type_meta(&self) -> bool {
        true
    }

    fn to_json_value(&self) -> Result<Value, String> {
        let mut map = Map::with_capacity(self.content.len() + 1);
        let metadata = serde_json::to_value(&self.metadata).map_err(|e| e.to_string())?;
        map.insert("metadata".into(), metadata);
        map.extend(self.content.iter().map(|(k, v)| (k.clone(), v.clone())));
        Ok(Value::Object(map))
    }

    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), String> {
        let metadata = serde_json::to_value(&self.metadata).map_err(|e| e.to_string())?;
        let whole = Whole {
            object: self,
            metadata,
            type_meta: true,
        };
        serde_json::to_writer(out, &whole).map_err(|e| e.to_string())
    }

    fn field_text(&self, path: &str) -> Option<String> {
        match path {
            "metadata.name" => self.metadata.name.clone(),
            "metadata.namespace" => self.metadata.namespace.clone(),
            _ => match self.at(path)? {
                Value::String(s) => Some(s.clone()),
                Value::Bool(b) => Some(b.to_string()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            },
        }
    }

    fn apply_defaults(&mut self) {
        self.version.schema.default_root(&mut self.content);
    }

    /// Defaults only: the schema's checks need the stored object (for
    /// ratcheting) and run with the version's other checks
    /// ([`KindOps::validate_served`](kapi_runtime::scheme::KindOps)).
    fn admit(&mut self) -> FieldErrors {
        self.version.schema.default_root(&mut self.content);
        FieldErrors::default()
    }

    fn validate_update(&self, _old: &dyn DynObject, _errs: &mut FieldErrors) {}

    fn prepare_create(&mut self) {}

    fn prepare_update(&mut self, _subresource: Option<&str>, _old: &dyn DynObject) {}

    fn validate_subresource_update(
        &self,
        _subresource: &str,
        _old: &dyn DynObject,
        _errs: &mut FieldErrors,
    ) {
    }

    fn warnings(&self, old: Option<&dyn DynObject>) -> Vec<String> {
        match old.and_then(|o| o.as_any().downcast_ref::<CustomObject>()) {
            Some(old) => self.ratcheted_failures(old),
            None => Vec::new(),
        }
    }

    fn answer(&mut self) {}

    fn reset_status(&mut self) {
        self.content.shift_remove("status");
    }

    fn copy_status_from(&mut self, other: &dyn DynObject) {
        let Some(other) = other.as_any().downcast_ref::<CustomObject>() else {
            return;
        };
        match other.content.get("status") {
            Some(status) => {
                self.content.insert("status".into(), status.clone());
            }
            None => {
                self.content.shift_remove("status");
            }
        }
    }

    fn spec_semantic_eq(&self, other: &dyn DynObject) -> bool {
        let Some(other) = other.as_any().downcast_ref::<CustomObject>() else {
            return false;
        };
        let mut mine: Vec<_> = self.desired().collect();
        let mut theirs: Vec<_> = other.desired().collect();
        mine.sort_unstable_by(|a, b| a.0.cmp(b.0));
        theirs.sort_unstable_by(|a, b| a.0.cmp(b.0));
        mine == theirs
    }

    fn object_eq(&self, other: &dyn DynObject) -> bool {
        other
            .as_any()
            .downcast_ref::<CustomObject>()
            .is_some_and(|other| {
                std::ptr::eq(self.version.info, other.version.info)
                    && self.metadata == other.metadata
                    && self.content == other.content
            })
    }

    fn table_cells(&self) -> Option<Vec<Value>> {
        None
    }

    fn deletion_grace_period(&self, _requested: Option<i64>) -> Option<i64> {
        None
    }
}
