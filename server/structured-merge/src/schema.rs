//! The merge schema of a kind (`schema.Schema`): for every node whether it
//! is a scalar, a list (atomic, set, or map with keys) or a map (a struct
//! with fields, or a map of one element type; granular or atomic), built
//! from OpenAPI definitions as kube-openapi's `schemaconv` builds it:
//! `x-kubernetes-list-type`, `-list-map-keys`, `-map-type`, and for lists
//! without a list type their `patchStrategy`/`patchMergeKey`.

use std::collections::HashMap;

use serde_json::{Map as JsonMap, Value};

/// How the items of a list or map relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relationship {
    /// Replaced as a whole; owned as one field.
    Atomic,
    /// Items of a map owned one by one (`granular`).
    Separable,
    /// Items of a list owned one by one, by key or by value.
    Associative,
}

/// The kind of a scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Numeric,
    String,
    Boolean,
    /// Any scalar (int-or-string, quantities, times).
    Untyped,
}

/// A reference to a node type, with an optional map relationship set at
/// the referring field (`x-kubernetes-map-type` beside a `$ref`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeRef {
    atom: usize,
    map_relationship: Option<Relationship>,
}

/// A list.
#[derive(Clone, Debug)]
pub struct List {
    pub element: TypeRef,
    pub relationship: Relationship,
    /// The key fields of a list of type map.
    pub keys: Vec<String>,
}

/// A field of a struct.
#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub ty: TypeRef,
    /// The schema's default, which list-map keys fall back to.
    pub default: Option<Value>,
}

/// A map: a struct's fields and/or the type of any other key.
#[derive(Clone, Debug)]
pub struct MapType {
    pub fields: Vec<Field>,
    index: HashMap<String, usize>,
    /// The type of keys that are not fields; None where no other key is
    /// allowed.
    pub element: Option<TypeRef>,
    pub relationship: Relationship,
}

impl MapType {
    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.index.get(name).map(|&i| &self.fields[i])
    }

    /// The type of the value under `key`.
    pub fn type_of(&self, key: &str) -> Option<TypeRef> {
        self.field(key).map(|f| f.ty).or(self.element)
    }
}

/// One node type: what a value of it may be. An untyped node may be all
/// three; the value decides.
#[derive(Clone, Debug, Default)]
pub struct Atom {
    pub scalar: Option<Scalar>,
    pub list: Option<List>,
    pub map: Option<MapType>,
}

/// A node type resolved for a value: the atom's parts, the map's
/// relationship possibly overridden by the reference.
#[derive(Clone, Copy, Debug)]
pub struct Resolved<'s> {
    pub scalar: Option<Scalar>,
    pub list: Option<&'s List>,
    pub map: Option<(&'s MapType, Relationship)>,
}

impl Resolved<'_> {
    /// `deduceAtom`: the one part that fits the value, when the atom has it;
    /// the whole atom otherwise (and for absent values and nulls).
    pub fn deduce(self, value: Option<&Value>) -> Self {
        let only = |r: Self| Resolved {
            scalar: r.scalar,
            list: None,
            map: None,
        };
        match value {
            Some(Value::Number(_) | Value::String(_) | Value::Bool(_)) if self.scalar.is_some() => {
                only(self)
            }
            Some(Value::Array(_)) if self.list.is_some() => Resolved {
                scalar: None,
                list: self.list,
                map: None,
            },
            Some(Value::Object(_)) if self.map.is_some() => Resolved {
                scalar: None,
                list: None,
                map: self.map,
            },
            _ => self,
        }
    }

    /// Whether two deductions are the same atom.
    pub fn same(&self, other: &Self) -> bool {
        self.scalar == other.scalar
            && self.list.map(std::ptr::from_ref) == other.list.map(std::ptr::from_ref)
            && self.map.map(|(m, r)| (std::ptr::from_ref(m), r))
                == other.map.map(|(m, r)| (std::ptr::from_ref(m), r))
    }
}

/// The node types of one kind in one version.
#[derive(Clone, Debug)]
pub struct Schema {
    atoms: Vec<Atom>,
}

/// Any value, atomic throughout (`__untyped_atomic_`).
pub const UNTYPED: TypeRef = TypeRef {
    atom: 0,
    map_relationship: None,
};

/// Any value, maps granular, lists atomic (`__untyped_deduced_`): what
/// preserved unknown fields are.
pub const DEDUCED: TypeRef = TypeRef {
    atom: 1,
    map_relationship: None,
};

impl Default for Schema {
    fn default() -> Schema {
        let untyped = Atom {
            scalar: Some(Scalar::Untyped),
            list: Some(List {
                element: UNTYPED,
                relationship: Relationship::Atomic,
                keys: Vec::new(),
            }),
            map: Some(MapType {
                fields: Vec::new(),
                index: HashMap::new(),
                element: Some(UNTYPED),
                relationship: Relationship::Atomic,
            }),
        };
        let deduced = Atom {
            scalar: Some(Scalar::Untyped),
            list: Some(List {
                element: UNTYPED,
                relationship: Relationship::Atomic,
                keys: Vec::new(),
            }),
            map: Some(MapType {
                fields: Vec::new(),
                index: HashMap::new(),
                element: Some(DEDUCED),
                relationship: Relationship::Separable,
            }),
        };
        Schema {
            atoms: vec![untyped, deduced],
        }
    }
}

impl Schema {
    /// The node type `tr` refers to.
    pub fn resolve(&self, tr: TypeRef) -> Resolved<'_> {
        let atom = &self.atoms[tr.atom];
        Resolved {
            scalar: atom.scalar,
            list: atom.list.as_ref(),
            map: atom
                .map
                .as_ref()
                .map(|m| (m, tr.map_relationship.unwrap_or(m.relationship))),
        }
    }

    /// Builds the schema of the definition `root` of an OpenAPI document's
    /// definitions (v2 `definitions` or v3 `components/schemas`), with every
    /// definition it reaches.
    pub fn from_definitions(definitions: &JsonMap<String, Value>, root: &str) -> (Schema, TypeRef) {
        let mut builder = Builder {
            definitions,
            schema: Schema::default(),
            named: HashMap::new(),
        };
        let atom = builder.named(root);
        (
            builder.schema,
            TypeRef {
                atom,
                map_relationship: None,
            },
        )
    }

    /// Builds the schema of an inline root schema (a custom resource's
    /// structural schema), whose `$ref`s point into `definitions`.
    pub fn from_root(definitions: &JsonMap<String, Value>, root: &Value) -> (Schema, TypeRef) {
        let mut builder = Builder {
            definitions,
            schema: Schema::default(),
            named: HashMap::new(),
        };
        let ty = builder.type_ref(root, false);
        (builder.schema, ty)
    }
}

/// Names of the definitions schemaconv treats specially.
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const RAW_EXTENSION: &str = "io.k8s.apimachinery.pkg.runtime.RawExtension";

struct Builder<'d> {
    definitions: &'d JsonMap<String, Value>,
    schema: Schema,
    named: HashMap<String, usize>,
}

impl Builder<'_> {
    fn push(&mut self, atom: Atom) -> usize {
        self.schema.atoms.push(atom);
        self.schema.atoms.len() - 1
    }

    /// The atom of a named definition, built once (recursive definitions
    /// refer to the placeholder while it is being built).
    fn named(&mut self, name: &str) -> usize {
        if let Some(&at) = self.named.get(name) {
            return at;
        }
        let at = self.push(Atom::default());
        self.named.insert(name.to_owned(), at);
        let atom = match name {
            QUANTITY => Atom {
                scalar: Some(Scalar::Untyped),
                ..Atom::default()
            },
            RAW_EXTENSION => self.schema.atoms[UNTYPED.atom].clone(),
            _ => match self.definitions.get(name) {
                Some(def) => {
                    let preserve = preserves(def);
                    self.parse(def, preserve)
                }
                None => self.schema.atoms[DEDUCED.atom].clone(),
            },
        };
        self.schema.atoms[at] = atom;
        at
    }

    fn parse(&mut self, s: &Value, preserve: bool) -> Atom {
        match s.get("type").and_then(Value::as_str).unwrap_or_default() {
            "" => Atom {
                scalar: Some(Scalar::Untyped),
                list: Some(self.list(s, preserve)),
                map: Some(self.object(s, preserve)),
            },
            "object" => Atom {
                map: Some(self.object(s, preserve)),
                ..Atom::default()
            },
            "array" => Atom {
                list: Some(self.list(s, preserve)),
                ..Atom::default()
            },
            kind => Atom {
                scalar: Some(primitive(kind, s.get("format").and_then(Value::as_str))),
                ..Atom::default()
            },
        }
    }

    /// The type a property or item schema refers to: a named definition
    /// (possibly through a one-element `allOf`), or one built inline.
    fn type_ref(&mut self, s: &Value, preserve: bool) -> TypeRef {
        let reference = s.get("$ref").and_then(Value::as_str).or_else(|| {
            match s.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
                Some([one]) => one.get("$ref").and_then(Value::as_str),
                _ => None,
            }
        });
        if let Some(name) = reference
            .and_then(|r| r.rsplit('/').next())
            .filter(|n| !n.is_empty())
        {
            return TypeRef {
                atom: self.named(name),
                map_relationship: map_relationship(s),
            };
        }
        let preserve = preserve || preserves(s);
        let atom = self.parse(s, preserve);
        TypeRef {
            atom: self.push(atom),
            map_relationship: None,
        }
    }

    fn object(&mut self, s: &Value, preserve: bool) -> MapType {
        let mut fields = Vec::new();
        let mut index = HashMap::new();
        let properties = s.get("properties").and_then(Value::as_object);
        for (name, property) in properties.into_iter().flatten() {
            index.insert(name.clone(), fields.len());
            fields.push(Field {
                name: name.clone(),
                ty: self.type_ref(property, preserve),
                default: property.get("default").cloned(),
            });
        }
        let element = match s.get("additionalProperties") {
            None | Some(Value::Null) => (preserve || fields.is_empty()).then_some(DEDUCED),
            Some(Value::Bool(true)) => Some(DEDUCED),
            Some(Value::Bool(false)) => None,
            Some(schema) => Some(self.type_ref(schema, preserve)),
        };
        MapType {
            fields,
            index,
            element,
            relationship: map_relationship(s).unwrap_or(Relationship::Separable),
        }
    }

    fn list(&mut self, s: &Value, preserve: bool) -> List {
        let (relationship, keys) = list_relationship(s);
        let element = match s.get("items") {
            Some(items) if items.is_object() => self.type_ref(items, preserve),
            _ => UNTYPED,
        };
        List {
            element,
            relationship,
            keys,
        }
    }
}

fn preserves(s: &Value) -> bool {
    s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
}

fn primitive(kind: &str, format: Option<&str>) -> Scalar {
    match (kind, format.unwrap_or_default()) {
        ("integer" | "number", _) => Scalar::Numeric,
        ("string", "" | "byte") => Scalar::String,
        ("boolean", _) => Scalar::Boolean,
        _ => Scalar::Untyped,
    }
}

fn map_relationship(s: &Value) -> Option<Relationship> {
    match s.get("x-kubernetes-map-type").and_then(Value::as_str) {
        Some("atomic") => Some(Relationship::Atomic),
        Some("granular") => Some(Relationship::Separable),
        _ => None,
    }
}

/// `getListElementRelationship`: the list type, else the patch strategy
/// (`merge` with a merge key is a map by that key, `merge` alone a set),
/// else atomic.
fn list_relationship(s: &Value) -> (Relationship, Vec<String>) {
    let text = |key: &str| s.get(key).and_then(Value::as_str);
    match text("x-kubernetes-list-type") {
        Some("set") => return (Relationship::Associative, Vec::new()),
        Some("map") => {
            let keys = s
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|k| {
                    k.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            return (Relationship::Associative, keys);
        }
        Some(_) => return (Relationship::Atomic, Vec::new()),
        None => {}
    }
    match text("x-kubernetes-patch-strategy") {
        Some("merge" | "merge,retainKeys") => match text("x-kubernetes-patch-merge-key") {
            Some(key) => (Relationship::Associative, vec![key.to_owned()]),
            None => (Relationship::Associative, Vec::new()),
        },
        _ => (Relationship::Atomic, Vec::new()),
    }
}
