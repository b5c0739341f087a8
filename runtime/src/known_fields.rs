//! Which fields of a body a type does not know, found from the type's OpenAPI
//! schema instead of from its `Deserialize`.
//!
//! Strict field validation needs the path of every unknown field. Wrapping each
//! kind's derived `Deserialize` to observe what it ignores would compile every
//! kind's decoder a second time (and a third, for decoding from a `Value`); this
//! module is one walker shared by every kind, driven by a compact [`Shape`] built
//! once per type from the schema the type already describes.

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock, RwLock};

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::openapi::{Definitions, referenced};

/// The fields a type accepts, nested: a tree of nodes (a graph where types
/// refer to themselves), node 0 the root.
#[derive(Debug)]
pub struct Shape {
    nodes: Vec<Node>,
}

#[derive(Debug)]
enum Node {
    /// Anything goes: a scalar, or free-form JSON (`RawExtension`, `JSON`,
    /// `FieldsV1`, preserved unknown fields).
    Any,
    /// An object with named fields, or a map (`additionalProperties`).
    Object {
        fields: HashMap<Box<str>, usize>,
        values: Option<usize>,
    },
    /// An array of the node's items.
    Array(usize),
}

impl Shape {
    /// The shape of `T`, built from its schema on first use and shared after.
    pub fn of<T: crate::openapi::OpenApi + 'static>() -> Arc<Shape> {
        Shape::cached(TypeId::of::<T>(), T::schema)
    }

    fn cached(key: TypeId, schema: fn(&mut Definitions) -> Value) -> Arc<Shape> {
        type Shapes = RwLock<HashMap<TypeId, Arc<Shape>>>;
        static SHAPES: OnceLock<Shapes> = OnceLock::new();
        let shapes = SHAPES.get_or_init(RwLock::default);
        if let Some(shape) = shapes.read().ok().and_then(|s| s.get(&key).cloned()) {
            return shape;
        }
        let mut defs = Definitions::new();
        let root = schema(&mut defs);
        let shape = Arc::new(Shape::from_schema(&defs, &root));
        if let Ok(mut shapes) = shapes.write() {
            shapes.entry(key).or_insert_with(|| shape.clone());
        }
        shape
    }

    /// The shape of `root`, whose `$ref`s name definitions in `defs`.
    pub fn from_schema(defs: &Definitions, root: &Value) -> Shape {
        let mut builder = Builder {
            defs,
            nodes: Vec::new(),
            named: HashMap::new(),
        };
        builder.node(root);
        Shape {
            nodes: builder.nodes,
        }
    }

    /// The unknown fields of a JSON text, as paths (`spec.foo`,
    /// `spec.ports[0].x`), in the order of the text. Text that is not JSON, or
    /// does not have the type's form, reports what was found before the fault:
    /// the typed decode reports the fault itself.
    pub fn unknown_in_json(&self, json: &[u8]) -> Vec<String> {
        let mut unknown = Vec::new();
        let mut de = serde_json::Deserializer::from_slice(json);
        let walk = Walk {
            shape: self,
            node: 0,
            at: None,
            unknown: &mut unknown,
        };
        // A fault is the typed decode's to report.
        let _ = walk.deserialize(&mut de);
        unknown
    }

    /// The unknown fields of a JSON value, as [`Shape::unknown_in_json`].
    pub fn unknown_in_value(&self, value: &Value) -> Vec<String> {
        let mut unknown = Vec::new();
        self.walk_value(0, value, None, &mut unknown);
        unknown
    }

    fn walk_value(&self, node: usize, value: &Value, at: Option<&Step<'_>>, out: &mut Vec<String>) {
        match (&self.nodes[node], value) {
            (Node::Object { fields, values }, Value::Object(map)) => {
                for (key, value) in map {
                    let step = Step {
                        parent: at,
                        segment: Segment::Key(key),
                    };
                    match fields.get(key.as_str()).copied().or(*values) {
                        Some(child) => self.walk_value(child, value, Some(&step), out),
                        None => out.push(step.path()),
                    }
                }
            }
            (Node::Array(items), Value::Array(elements)) => {
                for (index, element) in elements.iter().enumerate() {
                    let step = Step {
                        parent: at,
                        segment: Segment::Index(index),
                    };
                    self.walk_value(*items, element, Some(&step), out);
                }
            }
            _ => {}
        }
    }
}

/// Turns schemas into nodes, each named definition once.
struct Builder<'d> {
    defs: &'d Definitions,
    nodes: Vec<Node>,
    named: HashMap<&'d str, usize>,
}

impl<'d> Builder<'d> {
    fn node(&mut self, schema: &'d Value) -> usize {
        if let Some(name) = referenced(schema) {
            if let Some(&node) = self.named.get(name) {
                return node;
            }
            let index = self.push(Node::Any);
            self.named.insert(name, index);
            if let Some(definition) = self.defs.get(name) {
                self.fill(index, definition);
            }
            if self.defs.is_kind(name) {
                self.add_type_meta(index);
            }
            return index;
        }
        // OpenAPI 3 wraps a reference with a default in `allOf`.
        if let Some([only]) = schema
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            return self.node(only);
        }
        let index = self.push(Node::Any);
        self.fill(index, schema);
        index
    }

    /// `apiVersion` and `kind` known in the object `index`.
    fn add_type_meta(&mut self, index: usize) {
        let any = self.push(Node::Any);
        if let Some(Node::Object { fields, .. }) = self.nodes.get_mut(index) {
            for name in ["apiVersion", "kind"] {
                fields.entry(name.into()).or_insert(any);
            }
        }
    }

    fn push(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn fill(&mut self, index: usize, schema: &'d Value) {
        if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
            return;
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties").filter(|a| a.is_object());
        if properties.is_none() && additional.is_none() {
            if let Some(items) = schema.get("items") {
                let items = self.node(items);
                self.nodes[index] = Node::Array(items);
            }
            // A scalar, or an object of any fields.
            return;
        }
        let mut fields = HashMap::new();
        for (name, property) in properties.into_iter().flatten() {
            fields.insert(name.as_str().into(), self.node(property));
        }
        let values = additional.map(|a| self.node(a));
        self.nodes[index] = Node::Object { fields, values };
    }
}

/// Where the walk is: a chain of steps on the stack, made into a path only
/// when an unknown field is met.
struct Step<'a> {
    parent: Option<&'a Step<'a>>,
    segment: Segment<'a>,
}

enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

impl Step<'_> {
    fn path(&self) -> String {
        let mut path = String::new();
        self.write(&mut path);
        path
    }

    fn write(&self, path: &mut String) {
        if let Some(parent) = self.parent {
            parent.write(path);
        }
        match self.segment {
            Segment::Key(key) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Segment::Index(index) => {
                use fmt::Write;
                let _ = write!(path, "[{index}]");
            }
        }
    }
}

/// One node's walk over JSON text.
struct Walk<'s, 'a> {
    shape: &'s Shape,
    node: usize,
    at: Option<&'a Step<'a>>,
    unknown: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        match self.shape.nodes[self.node] {
            Node::Any => deserializer.deserialize_ignored_any(IgnoredAny).map(drop),
            _ => deserializer.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Walk<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Node::Object { fields, values } = &self.shape.nodes[self.node] else {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(());
        };
        while let Some(key) = map.next_key_seed(Key)? {
            let key: &str = &key;
            let step = Step {
                parent: self.at,
                segment: Segment::Key(key),
            };
            match fields.get(key).copied().or(*values) {
                Some(node) => map.next_value_seed(Walk {
                    shape: self.shape,
                    node,
                    at: Some(&step),
                    unknown: &mut *self.unknown,
                })?,
                None => {
                    self.unknown.push(step.path());
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Node::Array(items) = self.shape.nodes[self.node] else {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(());
        };
        let mut index = 0;
        loop {
            let step = Step {
                parent: self.at,
                segment: Segment::Index(index),
            };
            let walk = Walk {
                shape: self.shape,
                node: items,
                at: Some(&step),
                unknown: &mut *self.unknown,
            };
            if seq.next_element_seed(walk)?.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }
}

/// A key as the text has it: borrowed unless it has escapes.
struct Key;

enum KeyText<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl std::ops::Deref for KeyText<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            KeyText::Borrowed(text) => text,
            KeyText::Owned(text) => text,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Key {
    type Value = KeyText<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<KeyText<'de>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = KeyText<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<KeyText<'de>, E> {
        Ok(KeyText::Borrowed(text))
    }

    fn visit_str<E>(self, text: &str) -> Result<KeyText<'de>, E> {
        Ok(KeyText::Owned(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn shape() -> Shape {
        let mut defs = Definitions::new();
        defs.insert(
            "Item".into(),
            json!({"type": "object", "properties": {
                "name": {"type": "string"},
                "child": {"$ref": "#/definitions/Item"},
                "free": {"type": "object"},
            }}),
        );
        let root = json!({"type": "object", "properties": {
            "kind": {"type": "string"},
            "items": {"type": "array", "items": {"$ref": "#/definitions/Item"}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "byName": {"type": "object", "additionalProperties": {"$ref": "#/definitions/Item"}},
            "raw": {"x-kubernetes-preserve-unknown-fields": true, "type": "object", "properties": {}},
        }});
        Shape::from_schema(&defs, &root)
    }

    #[test]
    fn unknown_fields_are_found_with_their_paths_in_order() {
        let body = json!({
            "kind": "K",
            "zzz": 1,
            "items": [{"name": "a"}, {"name": "b", "extra": [1], "child": {"deeper": {}}}],
            "labels": {"anything": "goes"},
            "byName": {"x": {"name": "x", "nope": true}},
            "raw": {"whatever": {"at": "all"}},
            "aaa": null,
        });
        let text = serde_json::to_vec(&body).unwrap();
        let want = [
            "zzz",
            "items[1].extra",
            "items[1].child.deeper",
            "byName.x.nope",
            "aaa",
        ];
        assert_eq!(shape().unknown_in_json(&text), want);
        assert_eq!(shape().unknown_in_value(&body), want);
    }

    #[test]
    fn escaped_keys_and_free_objects() {
        let text = br#"{"items": [{"free": {"a": {"b": 1}}, "n\u0061me": "x", "\u00e9": 1}]}"#;
        assert_eq!(shape().unknown_in_json(text), ["items[0].\u{e9}"]);
    }

    #[test]
    fn kinds_carry_type_meta_where_embedded() {
        let mut defs = Definitions::new();
        let claim = defs.define_kind("Claim", |_| {
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {}}}})
        });
        let root = json!({"type": "object", "properties": {
            "claims": {"type": "array", "items": claim},
        }});
        let shape = Shape::from_schema(&defs, &root);
        let body = br#"{"kind": "Set", "claims": [{"kind": "Claim", "apiVersion": "v1", "spec": {"kind": 1}}]}"#;
        assert_eq!(shape.unknown_in_json(body), ["kind", "claims[0].spec.kind"]);
    }

    #[test]
    fn faults_report_what_came_before() {
        assert_eq!(shape().unknown_in_json(br#"{"a": 1, "items": [tru"#), ["a"]);
        assert!(shape().unknown_in_json(b"[1, 2]").is_empty());
    }
}
