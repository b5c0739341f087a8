//! Path elements: how one step into an object is named in a field set
//! (`fieldpath.PathElement`), their order, and their two text forms (the
//! `f:`/`k:`/`v:`/`i:` keys of FieldsV1 and the `.a[name="x"]` form of
//! conflict messages).

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

use crate::value::{compare, equals, to_string, write_go_json_string, write_jsoniter_json};

/// One step into an object.
#[derive(Clone, Debug)]
pub enum PathElement {
    /// A field of a struct or a key of a map.
    Field(String),
    /// An item of a list of type map, by its key fields, sorted by name.
    Key(Vec<(String, Value)>),
    /// An item of a list of type set, by its value.
    Value(Value),
    /// An item of a list by its position (never produced for typed lists;
    /// read and written for completeness).
    Index(usize),
}

/// A path from the root of an object.
pub type Path = Vec<PathElement>;

impl PathElement {
    /// A field element.
    pub fn field(name: &str) -> PathElement {
        PathElement::Field(name.to_owned())
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The field name, if this is a field element.
    pub fn as_field(&self) -> Option<&str> {
        match self {
            PathElement::Field(name) => Some(name),
            _ => None,
        }
    }

    /// The FieldsV1 key of this element (`f:name`, `k:{"name":"x"}`,
    /// `v:"a"`, `i:0`), with Go's JSON escapes inside.
    pub fn to_key(&self) -> String {
        let mut out = String::new();
        match self {
            PathElement::Field(name) => {
                out.push_str("f:");
                out.push_str(name);
            }
            PathElement::Key(fields) => {
                out.push_str("k:{");
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_go_json_string(&mut out, name);
                    out.push(':');
                    write_jsoniter_json(&mut out, value);
                }
                out.push('}');
            }
            PathElement::Value(value) => {
                out.push_str("v:");
                write_jsoniter_json(&mut out, value);
            }
            PathElement::Index(i) => {
                out.push_str("i:");
                out.push_str(&i.to_string());
            }
        }
        out
    }

    /// Reads a FieldsV1 key. `Ok(None)` for a key of an unknown type,
    /// which readers skip, as upstream does.
    pub fn from_key(key: &str) -> Result<Option<PathElement>, String> {
        let bytes = key.as_bytes();
        if bytes.len() < 2 {
            return Err("key must be 2 characters long:".into());
        }
        if bytes[1] != b':' {
            return Err(format!("missing colon: {key}"));
        }
        let rest = &key[2..];
        let element = match bytes[0] {
            b'f' => PathElement::Field(rest.to_owned()),
            b'v' => PathElement::Value(
                serde_json::from_str(rest).map_err(|e| format!("parsing value: {e}"))?,
            ),
            b'k' => {
                let map: serde_json::Map<String, Value> =
                    serde_json::from_str(rest).map_err(|e| format!("parsing key: {e}"))?;
                let mut fields: Vec<(String, Value)> = map.into_iter().collect();
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                PathElement::Key(fields)
            }
            b'i' => PathElement::Index(
                rest.parse()
                    .map_err(|e| format!("strconv.Atoi: parsing {rest:?}: {e}"))?,
            ),
            _ => return Ok(None),
        };
        Ok(Some(element))
    }
}

impl Ord for PathElement {
    /// Fields before keys before values before indexes; within each by
    /// content (`PathElement.Compare`).
    fn cmp(&self, other: &PathElement) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.as_bytes().cmp(b.as_bytes()),
            (PathElement::Key(a), PathElement::Key(b)) => {
                for ((an, av), (bn, bv)) in a.iter().zip(b) {
                    let c = an
                        .as_bytes()
                        .cmp(bn.as_bytes())
                        .then_with(|| compare(av, bv));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (PathElement::Value(a), PathElement::Value(b)) => compare(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &PathElement) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &PathElement) -> bool {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a == b,
            (PathElement::Key(a), PathElement::Key(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((an, av), (bn, bv))| an == bn && equals(av, bv))
            }
            (PathElement::Value(a), PathElement::Value(b)) => equals(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for PathElement {}

impl fmt::Display for PathElement {
    /// The form of conflict messages: `.name`, `[k=v,k2=v2]`, `[=v]`, `[0]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", to_string(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", to_string(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path as conflict messages print it (`.spec.replicas`).
pub fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_round_trip() {
        for key in [
            "f:spec",
            r#"k:{"containerPort":80,"protocol":"TCP"}"#,
            r#"v:"example.com/a""#,
            "i:3",
        ] {
            let element = PathElement::from_key(key).unwrap().unwrap();
            assert_eq!(element.to_key(), key);
        }
        assert!(PathElement::from_key("x:1").unwrap().is_none());
    }

    #[test]
    fn printed_as_conflicts_print_them() {
        let path = vec![
            PathElement::field("spec"),
            PathElement::field("containers"),
            PathElement::Key(vec![("name".into(), json!("nginx"))]),
            PathElement::field("image"),
        ];
        assert_eq!(
            path_string(&path),
            r#".spec.containers[name="nginx"].image"#
        );
    }
}
