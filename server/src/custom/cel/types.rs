//! The CEL types of a structural schema's values, with the size bounds the
//! cost estimate needs: from a schema node (what a value may be: `maxItems`,
//! `maxLength`, `maxProperties`, or what the largest request could hold) or
//! from a value itself (what it is).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

/// The largest request body kube-apiserver accepts (3 MiB): what bounds a
/// list, map or string whose schema sets no maximum.
pub const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;

/// A value's CEL type and its largest size.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// Anything (`x-kubernetes-preserve-unknown-fields`, an empty schema).
    Dyn,
    /// `x-kubernetes-int-or-string`.
    IntOrString,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    /// A string of at most `max` bytes.
    String {
        max: u64,
    },
    Bytes {
        max: u64,
    },
    Duration,
    Timestamp,
    /// A list of at most `max` elements.
    List {
        elem: Arc<Ty>,
        max: u64,
    },
    /// A map from strings (`additionalProperties`) of at most `max` entries.
    Map {
        value: Arc<Ty>,
        max: u64,
    },
    /// An object with named fields (names as CEL spells them, escaped).
    Object {
        fields: Arc<BTreeMap<String, Ty>>,
        max: u64,
    },
    Optional(Arc<Ty>),
    /// A type value (`int`, `type(x)`).
    Type,
}

impl Ty {
    /// The type of values a schema node allows (`schema` is the node's JSON).
    pub fn of_schema(schema: &Value) -> Ty {
        Ty::of_node(schema, false)
    }

    /// The type of the root of a custom object: its schema's, with
    /// `apiVersion`, `kind` and the `metadata` fields CEL sees (name and
    /// generateName).
    pub fn of_root(schema: &Value) -> Ty {
        Ty::of_node(schema, true)
    }

    fn of_node(schema: &Value, root: bool) -> Ty {
        let Some(node) = schema.as_object() else {
            return Ty::Dyn;
        };
        let flag = |key: &str| node.get(key).and_then(Value::as_bool).unwrap_or(false);
        let count = |key: &str| node.get(key).and_then(Value::as_u64);
        if flag("x-kubernetes-int-or-string") {
            return Ty::IntOrString;
        }
        let embedded = flag("x-kubernetes-embedded-resource");
        match node.get("type").and_then(Value::as_str).unwrap_or("") {
            "boolean" => Ty::Bool,
            "integer" => Ty::Int,
            "number" => Ty::Double,
            "string" => match node.get("format").and_then(Value::as_str) {
                Some("date-time") => Ty::Timestamp,
                Some("duration") => Ty::Duration,
                Some("byte") => Ty::Bytes {
                    max: count("maxLength").unwrap_or(MAX_REQUEST_BYTES - 2),
                },
                _ => Ty::String {
                    max: count("maxLength").unwrap_or(MAX_REQUEST_BYTES - 2),
                },
            },
            "array" => {
                let elem = node
                    .get("items")
                    .map(|items| Ty::of_node(items, false))
                    .unwrap_or(Ty::Dyn);
                let max = count("maxItems").unwrap_or_else(|| most_items(elem.min_size()));
                Ty::List {
                    elem: Arc::new(elem),
                    max,
                }
            }
            "object" => {
                let properties = node.get("properties").and_then(Value::as_object);
                let additional = node.get("additionalProperties").filter(|a| a.is_object());
                if let (None, Some(additional)) = (properties, additional) {
                    let value = Ty::of_node(additional, false);
                    let max =
                        count("maxProperties").unwrap_or_else(|| most_items(value.min_size() + 3));
                    return Ty::Map {
                        value: Arc::new(value),
                        max,
                    };
                }
                if properties.is_none()
                    && !embedded
                    && !root
                    && flag("x-kubernetes-preserve-unknown-fields")
                {
                    return Ty::Dyn;
                }
                let mut fields: BTreeMap<String, Ty> = properties
                    .into_iter()
                    .flatten()
                    .filter_map(|(name, schema)| Some((escape(name)?, Ty::of_node(schema, false))))
                    .collect();
                if embedded || root {
                    let text = Ty::String {
                        max: MAX_REQUEST_BYTES - 2,
                    };
                    fields.insert("apiVersion".into(), text.clone());
                    fields.insert("kind".into(), text.clone());
                    let metadata = BTreeMap::from([
                        ("name".to_owned(), text.clone()),
                        ("generateName".to_owned(), text),
                    ]);
                    fields.insert(
                        "metadata".into(),
                        Ty::Object {
                            fields: Arc::new(metadata),
                            max: 2,
                        },
                    );
                }
                let max = fields.len() as u64;
                Ty::Object {
                    fields: Arc::new(fields),
                    max,
                }
            }
            _ => Ty::Dyn,
        }
    }

    /// The type of `value` as it is, sized by what it holds (the cost of a
    /// rule on this very value).
    pub fn of_value(value: &Value) -> Ty {
        match value {
            Value::Null => Ty::Null,
            Value::Bool(_) => Ty::Bool,
            Value::Number(n) if n.is_f64() => Ty::Double,
            Value::Number(_) => Ty::Int,
            Value::String(s) => Ty::String {
                max: s.len() as u64,
            },
            Value::Array(items) => {
                let elem = items
                    .iter()
                    .map(Ty::of_value)
                    .reduce(Ty::widen)
                    .unwrap_or(Ty::Dyn);
                Ty::List {
                    elem: Arc::new(elem),
                    max: items.len() as u64,
                }
            }
            Value::Object(map) => {
                let value = map
                    .values()
                    .map(Ty::of_value)
                    .reduce(Ty::widen)
                    .unwrap_or(Ty::Dyn);
                Ty::Map {
                    value: Arc::new(value),
                    max: map.len() as u64,
                }
            }
        }
    }

    /// The type `self` (a schema's) sized by what `value` holds: the cost
    /// of a rule on this very value. Fields the value leaves out are left
    /// out of the type.
    pub fn sized(&self, value: &Value) -> Ty {
        match (self, value) {
            (Ty::Object { fields, .. }, Value::Object(map)) => {
                let sized: BTreeMap<String, Ty> = map
                    .iter()
                    .filter_map(|(k, v)| {
                        let escaped = escape(k)?;
                        let ty = fields.get(&escaped)?.sized(v);
                        Some((escaped, ty))
                    })
                    .collect();
                let max = sized.len() as u64;
                Ty::Object {
                    fields: Arc::new(sized),
                    max,
                }
            }
            (Ty::Map { value: of, .. }, Value::Object(map)) => Ty::Map {
                value: Arc::new(
                    map.values()
                        .map(|v| of.sized(v))
                        .reduce(Ty::widen)
                        .unwrap_or(Ty::Dyn),
                ),
                max: map.len() as u64,
            },
            (Ty::List { elem, .. }, Value::Array(items)) => Ty::List {
                elem: Arc::new(
                    items
                        .iter()
                        .map(|v| elem.sized(v))
                        .reduce(Ty::widen)
                        .unwrap_or(Ty::Dyn),
                ),
                max: items.len() as u64,
            },
            (Ty::String { .. }, Value::String(s)) => Ty::String {
                max: s.len() as u64,
            },
            (Ty::Bytes { .. }, Value::String(s)) => Ty::Bytes {
                max: (s.len() as u64).div_ceil(4) * 3,
            },
            (Ty::Dyn | Ty::IntOrString, v) => Ty::of_value(v),
            (ty, _) => ty.clone(),
        }
    }

    /// A type that bounds both `self` and `other` (the largest sizes of
    /// either).
    fn widen(self, other: Ty) -> Ty {
        match (self, other) {
            (Ty::String { max: a }, Ty::String { max: b }) => Ty::String { max: a.max(b) },
            (Ty::List { elem: a, max: m }, Ty::List { elem: b, max: n }) => Ty::List {
                elem: Arc::new(Ty::widen((*a).clone(), (*b).clone())),
                max: m.max(n),
            },
            (Ty::Map { value: a, max: m }, Ty::Map { value: b, max: n }) => Ty::Map {
                value: Arc::new(Ty::widen((*a).clone(), (*b).clone())),
                max: m.max(n),
            },
            (a, b) if a == b => a,
            (a, Ty::Null) => a,
            (Ty::Null, b) => b,
            _ => Ty::Dyn,
        }
    }

    /// The fewest bytes a value of this type takes in JSON, which bounds how
    /// many of them one request can carry.
    fn min_size(&self) -> u64 {
        match self {
            Ty::Bool => 4,
            Ty::String { .. } | Ty::Bytes { .. } | Ty::List { .. } => 2,
            Ty::Map { .. } | Ty::Object { .. } => 2,
            Ty::Duration => 4,
            Ty::Timestamp => 22,
            _ => 1,
        }
    }

    /// The largest size a value of this type has: elements, entries or
    /// bytes (`None`: not sized).
    pub fn size(&self) -> Option<u64> {
        match self {
            Ty::String { max } | Ty::Bytes { max } => Some(*max),
            Ty::List { max, .. } | Ty::Map { max, .. } | Ty::Object { max, .. } => Some(*max),
            _ => None,
        }
    }

    /// The name CEL prints for the type.
    pub fn name(&self) -> &'static str {
        match self {
            Ty::Dyn | Ty::IntOrString => "dyn",
            Ty::Null => "null_type",
            Ty::Bool => "bool",
            Ty::Int => "int",
            Ty::Uint => "uint",
            Ty::Double => "double",
            Ty::String { .. } => "string",
            Ty::Bytes { .. } => "bytes",
            Ty::Duration => "google.protobuf.Duration",
            Ty::Timestamp => "google.protobuf.Timestamp",
            Ty::List { .. } => "list",
            Ty::Map { .. } | Ty::Object { .. } => "map",
            Ty::Optional(_) => "optional_type",
            Ty::Type => "type",
        }
    }
}

/// How many values of `size` bytes fit in the largest request, each with a
/// separating comma.
fn most_items(size: u64) -> u64 {
    (MAX_REQUEST_BYTES - 2) / (size + 1)
}

/// Words CEL reserves, which a property name can only be reached by as
/// `__word__`.
const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The name a CEL expression reaches the property `name` by, as
/// Kubernetes escapes it (`__dash__`, `__dot__`, `__slash__`,
/// `__underscores__`, `__keyword__`); `None` for a name no CEL identifier
/// can spell.
pub fn escape(name: &str) -> Option<String> {
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut chars = name.chars();
    let first = chars.next()?;
    if !(first.is_ascii_alphabetic() || first == '_') {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn property_names_are_escaped_as_kubernetes_escapes_them() {
        assert_eq!(escape("size").as_deref(), Some("size"));
        assert_eq!(
            escape("a-b.c/d").as_deref(),
            Some("a__dash__b__dot__c__slash__d")
        );
        assert_eq!(escape("x__y").as_deref(), Some("x__underscores__y"));
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("1st"), None);
        assert_eq!(escape("a b"), None);
    }

    #[test]
    fn unbounded_lists_are_sized_by_the_largest_request() {
        let ty = Ty::of_schema(&json!({"type": "array", "items": {"type": "string"}}));
        assert_eq!(ty.size(), Some((MAX_REQUEST_BYTES - 2) / 3));
        let ty =
            Ty::of_schema(&json!({"type": "array", "maxItems": 7, "items": {"type": "string"}}));
        assert_eq!(ty.size(), Some(7));
    }
}
