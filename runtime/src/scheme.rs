//! The scheme: every annotated kind, collected at link time without a hand-written
//! list, and the type-erased operations the one generic request path calls.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use serde_json::{Map, Value};

use crate::meta::ObjectMeta;
use crate::proto;
use crate::resource::{Resource, ResourceInfo};
use crate::validation::{FieldErrors, FieldPath};

/// Every kind annotated with `#[derive(Resource)]` in every linked crate.
///
/// A crate whose kinds the binary never references is dropped by the linker: each
/// kinds crate therefore exposes an `install(&mut Scheme)` that the server calls.
#[linkme::distributed_slice]
pub static KINDS: [fn() -> KindEntry];

/// The answer of [`KindOps::admit`]: the object as the kind's type understood it.
#[derive(Debug)]
pub struct Admitted {
    /// The object re-encoded from its typed form: unknown fields dropped, defaults
    /// applied, kind hooks run. Has no `apiVersion`/`kind`.
    pub object: Map<String, Value>,
    /// Fields of the input the type does not know (`spec.foo`, `spec.ports[0].x`).
    pub unknown_fields: Vec<String>,
    /// Validation errors of the kind's own fields.
    pub errors: FieldErrors,
}

/// The kind-specific operations of the request path, type-erased over JSON.
pub trait KindOps: Send + Sync {
    /// Decodes, runs the prepare hook, defaults, validates and re-encodes.
    fn admit(&self, object: Map<String, Value>) -> Result<Admitted, String>;

    /// Printer-column cells computed in code, if the kind has such a hook.
    fn table_cells(&self, object: &Value) -> Option<Vec<Value>>;

    /// Graceful-deletion period for a delete asking for `requested` seconds.
    fn deletion_grace_period(&self, object: &Value, requested: Option<i64>) -> Option<i64>;
}

/// The protobuf codec of a kind, type-erased for the one request path.
pub trait ProtoKind: Send + Sync {
    /// Decodes the kind's message (the `raw` of a request's envelope) into the JSON
    /// object the request path works on (no `apiVersion`/`kind`).
    fn decode(&self, raw: &[u8]) -> Result<Map<String, Value>, String>;

    /// Encodes an object given as JSON text as the kind's message.
    fn encode_json(&self, json: &[u8]) -> Result<Vec<u8>, String>;

    /// Encodes an object as the request path holds it — typed metadata, the other
    /// top-level fields as JSON values (`kind`/`apiVersion` not among them) — as
    /// the kind's message, without writing JSON text in between.
    fn encode_parts(
        &self,
        metadata: &ObjectMeta,
        body: &Map<String, Value>,
    ) -> Result<Vec<u8>, String>;

    /// Decodes the kind's message into the request path's form: typed metadata
    /// and the other top-level fields as JSON values.
    fn decode_parts(&self, raw: &[u8]) -> Result<(ObjectMeta, Map<String, Value>), String>;

    /// The message name and fields, for the check against upstream's `.proto`.
    fn describe(&self) -> (&'static str, Vec<proto::FieldDescriptor>);
}

/// One registered kind: its facts and its operations.
#[derive(Clone, Copy)]
pub struct KindEntry {
    /// Identity and REST facts.
    pub info: &'static ResourceInfo,
    /// Kind-specific operations.
    pub ops: &'static dyn KindOps,
    /// The protobuf codec; `None` for a JSON-only kind (one that declares no field
    /// numbers, as custom resources upstream).
    pub proto: Option<&'static dyn ProtoKind>,
}

impl std::fmt::Debug for KindEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KindEntry")
            .field("info", self.info)
            .finish_non_exhaustive()
    }
}

impl KindEntry {
    /// The entry of a statically typed kind (what the derive registers).
    pub fn of<T: Resource>() -> KindEntry {
        KindEntry {
            info: T::INFO,
            ops: Typed::<T>::OPS,
            proto: None,
        }
    }

    /// The entry of a kind with a protobuf message.
    pub fn with_protobuf<T: Resource + proto::Message>() -> KindEntry {
        KindEntry {
            proto: Some(Typed::<T>::PROTO),
            ..KindEntry::of::<T>()
        }
    }
}

impl<T: Resource + proto::Message> Typed<T> {
    const PROTO: &'static dyn ProtoKind = &Typed::<T>(PhantomData);
}

impl<T: Resource + proto::Message> ProtoKind for Typed<T> {
    fn decode(&self, raw: &[u8]) -> Result<Map<String, Value>, String> {
        let typed = T::decode(raw).map_err(|e| format!("{} {e}", T::INFO.kind))?;
        match serde_json::to_value(&typed).map_err(|e| e.to_string())? {
            Value::Object(map) => Ok(map),
            _ => Err(format!("{} does not encode as a JSON object", T::INFO.kind)),
        }
    }

    fn encode_json(&self, json: &[u8]) -> Result<Vec<u8>, String> {
        let typed: T = serde_json::from_slice(json).map_err(|e| e.to_string())?;
        Ok(typed.encode_to_vec())
    }

    fn encode_parts(
        &self,
        metadata: &ObjectMeta,
        body: &Map<String, Value>,
    ) -> Result<Vec<u8>, String> {
        use serde::de::IntoDeserializer;
        let mut typed = T::deserialize(body.into_deserializer()).map_err(|e| e.to_string())?;
        *typed.metadata_mut() = metadata.clone();
        Ok(typed.encode_to_vec())
    }

    fn decode_parts(&self, raw: &[u8]) -> Result<(ObjectMeta, Map<String, Value>), String> {
        let mut typed = T::decode(raw).map_err(|e| format!("{} {e}", T::INFO.kind))?;
        let metadata = std::mem::take(typed.metadata_mut());
        match serde_json::to_value(&typed).map_err(|e| e.to_string())? {
            Value::Object(mut map) => {
                map.shift_remove("metadata");
                Ok((metadata, map))
            }
            _ => Err(format!("{} does not encode as a JSON object", T::INFO.kind)),
        }
    }

    fn describe(&self) -> (&'static str, Vec<proto::FieldDescriptor>) {
        (T::NAME, T::describe())
    }
}

struct Typed<T>(PhantomData<fn() -> T>);

impl<T: Resource> Typed<T> {
    const OPS: &'static dyn KindOps = &Typed::<T>(PhantomData);

    fn decode(object: Value) -> Result<(T, Vec<String>), String> {
        let mut unknown = Vec::new();
        let typed = serde_ignored::deserialize(object, |path| unknown.push(json_path(&path)))
            .map_err(|e| e.to_string())?;
        Ok((typed, unknown))
    }
}

impl<T: Resource> KindOps for Typed<T> {
    fn admit(&self, object: Map<String, Value>) -> Result<Admitted, String> {
        let (mut typed, unknown_fields) = Self::decode(Value::Object(object))?;
        typed.prepare_for_write();
        typed.apply_defaults();
        let mut errors = FieldErrors::default();
        typed.validate(&FieldPath::root(), &mut errors);
        match serde_json::to_value(&typed).map_err(|e| e.to_string())? {
            Value::Object(object) => Ok(Admitted {
                object,
                unknown_fields,
                errors,
            }),
            _ => Err(format!("{} does not encode as a JSON object", T::INFO.kind)),
        }
    }

    fn table_cells(&self, object: &Value) -> Option<Vec<Value>> {
        let (typed, _) = Self::decode(object.clone()).ok()?;
        typed.table_cells()
    }

    fn deletion_grace_period(&self, object: &Value, requested: Option<i64>) -> Option<i64> {
        let (typed, _) = Self::decode(object.clone()).ok()?;
        typed.deletion_grace_period(requested)
    }
}

/// Formats a serde_ignored path as Kubernetes prints field paths
/// (`spec.containers[0].foo`).
fn json_path(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", json_path(parent)),
        Path::Map { parent, key } => {
            let parent = json_path(parent);
            if parent.is_empty() {
                key.clone()
            } else {
                format!("{parent}.{key}")
            }
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => json_path(parent),
    }
}

/// The kinds a server serves, looked up by group, version and plural.
#[derive(Clone, Debug, Default)]
pub struct Scheme {
    kinds: BTreeMap<(String, String, String), KindEntry>,
}

impl Scheme {
    /// An empty scheme.
    pub fn new() -> Scheme {
        Scheme::default()
    }

    /// Adds every registered kind of `group` (as linked into this binary).
    pub fn install_group(&mut self, group: &str) {
        for entry in KINDS.iter().map(|make| make()) {
            if entry.info.group == group {
                self.add(entry);
            }
        }
    }

    /// Adds one kind.
    pub fn add(&mut self, entry: KindEntry) {
        let i = entry.info;
        self.kinds
            .insert((i.group.into(), i.version.into(), i.plural.into()), entry);
    }

    /// The kind served at `group/version/plural`.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<&KindEntry> {
        self.kinds
            .get(&(group.to_owned(), version.to_owned(), plural.to_owned()))
    }

    /// Every kind, ordered by group, version and plural (deterministic output).
    pub fn entries(&self) -> impl Iterator<Item = &KindEntry> {
        self.kinds.values()
    }
}
