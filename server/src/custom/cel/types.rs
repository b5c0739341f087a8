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
/// The longest JSON string of a `date` (with its quotes), and of a
/// `date-time` or `duration` as Kubernetes bounds them.
pub const JSON_DATE_SIZE: u64 = 12;
pub const MAX_DATETIME_SIZE: u64 = 32;
/// The shortest JSON string of a `date-time` and of a `duration`.
const MIN_DATETIME_SIZE: u64 = 21;
const MIN_DURATION_SIZE: u64 = 3;
/// The longest name of a named format.
pub const MAX_FORMAT_SIZE: u64 = 64;

/// A key kapi sets (never on the wire) on a schema node it knows nothing
/// of, for a value of any type: a reference cut short where a type
/// contains itself.
pub const DYNAMIC: &str = "x-kapi-dynamic";

/// The names CEL gives the Kubernetes libraries' types.
pub const QUANTITY: &str = "kubernetes.Quantity";
pub const IP: &str = "net.IP";
pub const CIDR: &str = "net.CIDR";
pub const URL: &str = "kubernetes.URL";
pub const NAMED_FORMAT: &str = "kubernetes.NamedFormat";

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
    /// A `date-time` (or, with `date`, a `date`).
    Timestamp {
        date: bool,
    },
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
    /// A type of Kubernetes' libraries (a quantity, an IP address...), by
    /// its CEL name.
    Opaque(&'static str),
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
        if flag(DYNAMIC) {
            return Ty::Dyn;
        }
        let embedded = flag("x-kubernetes-embedded-resource");
        match node.get("type").and_then(Value::as_str).unwrap_or("") {
            "boolean" => Ty::Bool,
            "integer" => Ty::Int,
            "number" => Ty::Double,
            "string" => match node.get("format").and_then(Value::as_str) {
                Some("date-time") => Ty::Timestamp { date: false },
                Some("date") => Ty::Timestamp { date: true },
                Some("duration") => Ty::Duration,
                Some("byte") => Ty::Bytes {
                    max: count("maxLength").unwrap_or(MAX_REQUEST_BYTES - 2),
                },
                // `maxLength` counts characters, of up to four bytes each;
                // an enum bounds the length by its longest value.
                _ => Ty::String {
                    max: match (
                        count("maxLength"),
                        node.get("enum").and_then(Value::as_array),
                    ) {
                        (Some(max), _) => max.saturating_mul(4),
                        (None, Some(values)) if !values.is_empty() => values
                            .iter()
                            .filter_map(Value::as_str)
                            .map(|v| v.len() as u64)
                            .max()
                            .unwrap_or(0),
                        _ => MAX_REQUEST_BYTES - 2,
                    },
                },
            },
            "array" => {
                let elem = node
                    .get("items")
                    .map(|items| Ty::of_node(items, false))
                    .unwrap_or(Ty::Dyn);
                let max = count("maxItems").unwrap_or_else(|| {
                    let least = node.get("items").and_then(min_serialized).unwrap_or(0);
                    (MAX_REQUEST_BYTES - 2) / (least + 1)
                });
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
                    // Each entry: its value, an empty key's quotes, a colon
                    // and a comma.
                    let max = count("maxProperties").unwrap_or_else(|| {
                        (MAX_REQUEST_BYTES - 2) / (min_serialized(additional).unwrap_or(0) + 6)
                    });
                    return Ty::Map {
                        value: Arc::new(value),
                        max,
                    };
                }
                // An object that keeps unknown fields shows CEL only the
                // fields it declares; a property CEL cannot see (no type)
                // is left out, as upstream leaves it out.
                let mut fields: BTreeMap<String, Ty> = properties
                    .into_iter()
                    .flatten()
                    .filter(|(_, schema)| min_serialized(schema).is_some())
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
            Ty::Timestamp { .. } => "google.protobuf.Timestamp",
            Ty::List { .. } => "list",
            Ty::Map { .. } | Ty::Object { .. } => "map",
            Ty::Optional(_) => "optional_type",
            Ty::Type => "type",
            Ty::Opaque(name) => name,
        }
    }
}

/// The fewest bytes a value of schema `node` takes in JSON (an object's
/// required properties without defaults included), which bounds how many
/// of them one request can carry; `None` for a schema CEL does not see.
pub fn min_serialized(node: &Value) -> Option<u64> {
    let flag = |key: &str| node.get(key).and_then(Value::as_bool).unwrap_or(false);
    if flag("x-kubernetes-int-or-string") || flag(DYNAMIC) {
        return Some(1);
    }
    match node.get("type").and_then(Value::as_str).unwrap_or("") {
        "array" => node.get("items").and_then(min_serialized).map(|_| 2),
        "object" => {
            if let Some(values) = node.get("additionalProperties").filter(|a| a.is_object()) {
                return min_serialized(values).map(|_| 2);
            }
            let required: Vec<&str> = node
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let mut least = 2u64;
            for (name, property) in node
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                if required.contains(&name.as_str())
                    && property.get("default").is_none()
                    && let Some(size) = min_serialized(property)
                {
                    least = least.saturating_add(name.len() as u64 + size + 4);
                }
            }
            Some(least)
        }
        "string" => Some(match node.get("format").and_then(Value::as_str) {
            Some("duration") => MIN_DURATION_SIZE,
            Some("date") => JSON_DATE_SIZE,
            Some("date-time") => MIN_DATETIME_SIZE,
            _ => 2,
        }),
        "boolean" => Some(4),
        "number" | "integer" => Some(1),
        _ => None,
    }
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
