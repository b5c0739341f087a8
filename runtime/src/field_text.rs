//! One field of a typed object as text (`spec.nodeName`, `status.phase`), for
//! field selectors: the object's serde serialization is walked down the path
//! only, so sibling fields are never visited and nothing is allocated but the
//! answer.

use std::fmt;

use serde::ser::{self, Serialize, Serializer};
use serde_json::Value;

use crate::openapi::{Definitions, referenced};

/// The text of the scalar at the dotted `path` of `value`: strings as they are,
/// numbers and booleans as JSON writes them. `None` when the field is absent,
/// null, or not a scalar.
pub fn read<T: Serialize + ?Sized>(value: &T, path: &str) -> Option<String> {
    value
        .serialize(Probe {
            path: Path::new(path),
        })
        .ok()
        .flatten()
}

/// The part of the path still to walk.
#[derive(Clone, Copy)]
struct Path<'a>(Option<&'a str>);

impl<'a> Path<'a> {
    fn new(path: &'a str) -> Path<'a> {
        Path(Some(path).filter(|p| !p.is_empty()))
    }

    /// The next segment and the rest, if any segment is left.
    fn split(self) -> Option<(&'a str, Path<'a>)> {
        let path = self.0?;
        Some(match path.split_once('.') {
            Some((head, rest)) => (head, Path::new(rest)),
            None => (path, Path(None)),
        })
    }

    fn at_leaf(self) -> bool {
        self.0.is_none()
    }

    const LEAF: Path<'static> = Path(None);
}

/// Serialization failed inside the object (its own `Serialize` reported an error).
#[derive(Debug)]
struct Failed;

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the field could not be read")
    }
}

impl std::error::Error for Failed {}

impl ser::Error for Failed {
    fn custom<T: fmt::Display>(_: T) -> Failed {
        Failed
    }
}

type Found = Option<String>;

/// The serializer that walks to the field.
struct Probe<'a> {
    path: Path<'a>,
}

impl Probe<'_> {
    fn leaf(&self, text: impl FnOnce() -> String) -> Result<Found, Failed> {
        Ok(self.path.at_leaf().then(text))
    }
}

macro_rules! number_leaves {
    ($($method:ident: $t:ty),*) => {
        $(fn $method(self, v: $t) -> Result<Found, Failed> {
            self.leaf(|| v.to_string())
        })*
    };
}

impl<'a> Serializer for Probe<'a> {
    type Ok = Found;
    type Error = Failed;
    type SerializeSeq = Skip;
    type SerializeTuple = Skip;
    type SerializeTupleStruct = Skip;
    type SerializeTupleVariant = Skip;
    type SerializeMap = Entries<'a>;
    type SerializeStruct = Fields<'a>;
    type SerializeStructVariant = Skip;

    number_leaves!(
        serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_f32: f32, serialize_f64: f64, serialize_char: char
    );

    fn serialize_str(self, v: &str) -> Result<Found, Failed> {
        self.leaf(|| v.to_owned())
    }

    fn serialize_bytes(self, _: &[u8]) -> Result<Found, Failed> {
        Ok(None)
    }

    fn serialize_none(self) -> Result<Found, Failed> {
        Ok(None)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Found, Failed> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<Found, Failed> {
        Ok(None)
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<Found, Failed> {
        Ok(None)
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Found, Failed> {
        self.leaf(|| variant.to_owned())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Found, Failed> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        value: &T,
    ) -> Result<Found, Failed> {
        value.serialize(self)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Skip, Failed> {
        Ok(Skip)
    }

    fn serialize_tuple(self, _: usize) -> Result<Skip, Failed> {
        Ok(Skip)
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Skip, Failed> {
        Ok(Skip)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Skip, Failed> {
        Ok(Skip)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Entries<'a>, Failed> {
        Ok(Entries {
            next: self.path.split(),
            matched: false,
            found: None,
        })
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Fields<'a>, Failed> {
        Ok(Fields {
            next: self.path.split(),
            found: None,
        })
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Skip, Failed> {
        Ok(Skip)
    }
}

/// A struct on the way: only the field named by the next segment is descended.
struct Fields<'a> {
    next: Option<(&'a str, Path<'a>)>,
    found: Found,
}

impl ser::SerializeStruct for Fields<'_> {
    type Ok = Found;
    type Error = Failed;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Failed> {
        if let Some((segment, rest)) = self.next
            && segment == key
        {
            self.found = value.serialize(Probe { path: rest })?;
        }
        Ok(())
    }

    fn end(self) -> Result<Found, Failed> {
        Ok(self.found)
    }
}

/// A map on the way (a flattened struct serializes as one): the entry whose key
/// is the next segment is descended.
struct Entries<'a> {
    next: Option<(&'a str, Path<'a>)>,
    matched: bool,
    found: Found,
}

impl ser::SerializeMap for Entries<'_> {
    type Ok = Found;
    type Error = Failed;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Failed> {
        self.matched = match self.next {
            Some((segment, _)) => {
                key.serialize(Probe { path: Path::LEAF })?.as_deref() == Some(segment)
            }
            None => false,
        };
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Failed> {
        if let (true, Some((_, rest))) = (self.matched, self.next) {
            self.found = value.serialize(Probe { path: rest })?;
        }
        Ok(())
    }

    fn end(self) -> Result<Found, Failed> {
        Ok(self.found)
    }
}

/// A list or other value with no field text: its contents are not visited.
struct Skip;

macro_rules! skip_compound {
    ($($trait:ident: $method:ident),*) => {
        $(impl ser::$trait for Skip {
            type Ok = Found;
            type Error = Failed;

            fn $method<T: Serialize + ?Sized>(&mut self, _: &T) -> Result<(), Failed> {
                Ok(())
            }

            fn end(self) -> Result<Found, Failed> {
                Ok(None)
            }
        })*
    };
}

skip_compound!(
    SerializeSeq: serialize_element,
    SerializeTuple: serialize_element,
    SerializeTupleStruct: serialize_field,
    SerializeTupleVariant: serialize_field
);

impl ser::SerializeStructVariant for Skip {
    type Ok = Found;
    type Error = Failed;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Failed> {
        Ok(())
    }

    fn end(self) -> Result<Found, Failed> {
        Ok(None)
    }
}

/// What a field selector reads for a field the object leaves out: Go's zero
/// value of the field's type as upstream's `GetAttrs` functions format it
/// (`strconv.FormatBool` gives `false`, `strconv.Itoa` gives `0`, a string is
/// empty), found from the kind's OpenAPI schema (`schema` is the kind's `$ref`
/// with its definitions in `defs`). Empty when the path leads nowhere.
pub fn zero_text(defs: &Definitions, schema: &Value, path: &str) -> &'static str {
    let mut at = resolve(defs, schema);
    for segment in path.split('.') {
        let Some(property) = at
            .and_then(|s| s.get("properties"))
            .and_then(|p| p.get(segment))
        else {
            return "";
        };
        at = resolve(defs, property);
    }
    match at.and_then(|s| s.get("type")).and_then(Value::as_str) {
        Some("boolean") => "false",
        Some("integer" | "number") => "0",
        _ => "",
    }
}

/// A schema with its `$ref` (also one wrapped in `allOf`, as a described
/// reference is) followed.
fn resolve<'a>(defs: &'a Definitions, schema: &'a Value) -> Option<&'a Value> {
    let target = schema
        .get("allOf")
        .and_then(|all| all.get(0))
        .unwrap_or(schema);
    match referenced(target) {
        Some(name) => defs.get(name),
        None => Some(schema),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;

    use super::read;

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Spec {
        node_name: Option<String>,
        host_network: bool,
        replicas: i32,
        ports: Vec<i32>,
        labels: BTreeMap<String, String>,
    }

    #[derive(Serialize)]
    struct Object {
        spec: Spec,
        #[serde(flatten)]
        extra: BTreeMap<String, String>,
    }

    #[test]
    fn scalars_along_the_path() {
        let object = Object {
            spec: Spec {
                node_name: Some("n1".into()),
                host_network: true,
                replicas: 3,
                ports: vec![80],
                labels: BTreeMap::from([("a".into(), "b".into())]),
            },
            extra: BTreeMap::from([("phase".into(), "Running".into())]),
        };
        assert_eq!(read(&object, "spec.nodeName").as_deref(), Some("n1"));
        assert_eq!(read(&object, "spec.hostNetwork").as_deref(), Some("true"));
        assert_eq!(read(&object, "spec.replicas").as_deref(), Some("3"));
        assert_eq!(read(&object, "spec.labels.a").as_deref(), Some("b"));
        assert_eq!(read(&object, "phase").as_deref(), Some("Running"));
        assert_eq!(read(&object, "spec.ports"), None);
        assert_eq!(read(&object, "spec"), None);
        assert_eq!(read(&object, "spec.nodeName.deeper"), None);
        assert_eq!(read(&object, "spec.missing"), None);
        assert_eq!(read(&object, ""), None);
    }
}
