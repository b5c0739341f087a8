//! The scheme: every annotated kind, collected at link time without a hand-written
//! list, and the type-erased operations the one generic request path calls.

use std::collections::{BTreeMap, HashMap};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::known_fields::Shape;
use crate::object::DynObject;
use crate::proto;
use crate::resource::Resource;
use crate::resource_info::ResourceInfo;

/// Every kind annotated with `#[derive(Resource)]` in every linked crate.
///
/// A crate whose kinds the binary never references is dropped by the linker: each
/// kinds crate therefore exposes an `install(&mut Scheme)` that the server calls.
#[linkme::distributed_slice]
pub static KINDS: [fn() -> KindEntry];

/// A decoded body: the object as the kind's type, and what the type did not know.
#[derive(Debug)]
pub struct Decoded {
    /// The object.
    pub object: Box<dyn DynObject>,
    /// Fields of the input the type does not know (`spec.foo`,
    /// `spec.ports[0].x`); `kind` and `apiVersion` at the top are known.
    pub unknown_fields: Vec<String>,
}

/// Decoding into a kind's type, and the checks of its version, type-erased
/// for the one request path.
pub trait KindOps: Send + Sync {
    /// The checks a write through this version adds
    /// ([`Resource::validate_served`]), on the object as stored.
    fn validate_served(
        &self,
        object: &dyn DynObject,
        old: Option<&dyn DynObject>,
        errs: &mut crate::validation::FieldErrors,
    );

    /// Decodes a JSON object (a request body or a stored object) from its text.
    fn decode_json(&self, json: &[u8]) -> Result<Decoded, String>;

    /// Decodes a JSON value (a YAML body, a patched object).
    fn decode_value(&self, value: Value) -> Result<Decoded, String>;

    /// The kind's OpenAPI schema (a `$ref`; the definitions go into `defs`),
    /// as the Swagger 2.0 document has it.
    fn schema(&self, defs: &mut crate::openapi::Definitions) -> Value;

    /// The kind's own definition as the OpenAPI 3 documents have it, when
    /// it is not [`KindOps::schema`]'s (a custom resource's schema keeps in
    /// v3 what v2 cannot say).
    fn schema_v3(&self, _defs: &mut crate::openapi::Definitions) -> Option<Value> {
        None
    }

    /// The facts of the version objects of this kind are stored in, when it
    /// is not this one (the hub of a converted kind, the storage version of
    /// a custom resource).
    fn hub(&self) -> Option<&'static ResourceInfo>;

    /// An object of this version as the hub's (the object itself when this
    /// version is the hub).
    fn to_hub(&self, object: Box<dyn DynObject>) -> Result<Box<dyn DynObject>, String>;

    /// An object of the hub version as this version's.
    fn to_served(&self, object: Box<dyn DynObject>) -> Result<Box<dyn DynObject>, String>;

    /// The version objects are stored in, when it is another
    /// ([`Resource::STORED_AS`]).
    fn stored_as(&self) -> Option<&'static crate::resource::StoredForm> {
        None
    }

    /// Whether the kind is a custom resource, defined at run time: it has no
    /// Go struct upstream, so no strategic merge patch, and each of its
    /// versions prints its own columns.
    fn is_custom(&self) -> bool {
        false
    }

    /// Whether [`KindOps::to_served`] always answers the same for the same
    /// object, so that a cache may keep what it made: not when a custom
    /// resource's conversion webhook makes it, which may answer otherwise
    /// tomorrow.
    fn conversion_is_pure(&self) -> bool {
        true
    }
}

/// The protobuf codec of a kind, type-erased for the one request path.
pub trait ProtoKind: Send + Sync {
    /// Decodes the kind's message (the `raw` of an envelope).
    fn decode(&self, raw: &[u8]) -> Result<Box<dyn DynObject>, String>;

    /// Encodes an object of the kind as its message.
    fn encode(&self, object: &dyn DynObject) -> Result<Vec<u8>, String>;

    /// The message name and fields, for the check against upstream's `.proto`.
    fn describe(&self) -> (&'static str, Vec<proto::FieldDescriptor>);
}

/// One registered kind: its facts and its operations. A compiled kind's
/// entry is made once at start-up; a kind defined at run time (a custom
/// resource) gets one each time its definition changes, and the operations
/// it holds (its schema) are freed with the last request using them.
#[derive(Clone)]
pub struct KindEntry {
    /// Identity and REST facts (a run-time kind's are interned:
    /// [`crate::intern::info`]).
    pub info: &'static ResourceInfo,
    /// Kind-specific operations.
    pub ops: Arc<dyn KindOps>,
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
            ops: Arc::new(Typed::<T>(PhantomData)),
            proto: None,
        }
    }

    /// The kind's OpenAPI schema (a `$ref`; the definitions go into `defs`).
    pub fn schema(&self, defs: &mut crate::openapi::Definitions) -> Value {
        self.ops.schema(defs)
    }

    /// The kind's own definition in the OpenAPI 3 documents, when it
    /// differs from the Swagger 2.0 one.
    pub fn schema_v3(&self, defs: &mut crate::openapi::Definitions) -> Option<Value> {
        self.ops.schema_v3(defs)
    }

    /// The facts of the version this kind's objects are stored in, when it is
    /// not this one.
    pub fn hub(&self) -> Option<&'static ResourceInfo> {
        self.ops.hub()
    }

    /// An object of this version as the storage version's.
    pub fn to_hub(&self, object: Box<dyn DynObject>) -> Result<Box<dyn DynObject>, String> {
        self.ops.to_hub(object)
    }

    /// Whether the kind is a custom resource ([`KindOps::is_custom`]).
    pub fn is_custom(&self) -> bool {
        self.ops.is_custom()
    }

    /// An object of the storage version as this version's.
    pub fn to_served(&self, object: Box<dyn DynObject>) -> Result<Box<dyn DynObject>, String> {
        self.ops.to_served(object)
    }

    /// The text a field selector reads for `field` when an object leaves it
    /// out: Go's zero value of its type (`false`, `0`, empty), from the kind's
    /// schema, worked out once per kind and field.
    pub fn absent_field_text(&self, field: &str) -> &'static str {
        type Key = (&'static str, &'static str, String);
        static ZEROS: OnceLock<Mutex<HashMap<Key, &'static str>>> = OnceLock::new();
        let key = (self.info.group_version, self.info.kind, field.to_owned());
        let zeros = ZEROS.get_or_init(Mutex::default);
        if let Some(zero) = zeros.lock().ok().and_then(|z| z.get(&key).copied()) {
            return zero;
        }
        let mut defs = crate::openapi::Definitions::new();
        let schema = self.schema(&mut defs);
        let zero = crate::field_text::zero_text(&defs, &schema, field);
        if let Ok(mut zeros) = zeros.lock() {
            zeros.insert(key, zero);
        }
        zero
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
    fn decode(&self, raw: &[u8]) -> Result<Box<dyn DynObject>, String> {
        let typed = T::decode(raw).map_err(|e| format!("{} {e}", T::INFO.kind))?;
        Ok(Box::new(typed))
    }

    fn encode(&self, object: &dyn DynObject) -> Result<Vec<u8>, String> {
        let typed = object.downcast_ref::<T>().ok_or_else(|| {
            format!(
                "a {} cannot be encoded as a {}",
                object.info().kind,
                T::INFO.kind
            )
        })?;
        Ok(typed.encode_to_vec())
    }

    fn describe(&self) -> (&'static str, Vec<proto::FieldDescriptor>) {
        (T::NAME, T::describe())
    }
}

struct Typed<T>(PhantomData<fn() -> T>);

/// A decode error as Go's decoder words it: without serde_json's position.
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&position)
        .map_or(text.clone(), str::to_owned)
}

impl<T: Resource> KindOps for Typed<T> {
    fn validate_served(
        &self,
        object: &dyn DynObject,
        old: Option<&dyn DynObject>,
        errs: &mut crate::validation::FieldErrors,
    ) {
        T::validate_served(object, old, errs);
    }

    fn decode_json(&self, json: &[u8]) -> Result<Decoded, String> {
        let typed: T = serde_json::from_slice(json).map_err(|e| without_position(&e))?;
        Ok(Decoded {
            object: Box::new(typed),
            unknown_fields: Shape::of::<T>().unknown_in_json(json),
        })
    }

    fn decode_value(&self, value: Value) -> Result<Decoded, String> {
        // Through the text: one decoder per kind serves both forms.
        let unknown_fields = Shape::of::<T>().unknown_in_value(&value);
        let json = serde_json::to_vec(&value).map_err(|e| e.to_string())?;
        let typed: T = serde_json::from_slice(&json).map_err(|e| without_position(&e))?;
        Ok(Decoded {
            object: Box::new(typed),
            unknown_fields,
        })
    }

    fn schema(&self, defs: &mut crate::openapi::Definitions) -> Value {
        <T as crate::openapi::OpenApi>::schema(defs)
    }

    fn hub(&self) -> Option<&'static ResourceInfo> {
        T::HUB.map(|hub| hub.info)
    }

    fn stored_as(&self) -> Option<&'static crate::resource::StoredForm> {
        T::STORED_AS
    }

    fn to_hub(&self, object: Box<dyn DynObject>) -> Result<Box<dyn DynObject>, String> {
        match T::HUB {
            None => Ok(object),
            Some(hub) => (hub.to_hub)(object),
        }
    }

    fn to_served(&self, object: Box<dyn DynObject>) -> Result<Box<dyn DynObject>, String> {
        match T::HUB {
            None => Ok(object),
            Some(hub) => (hub.from_hub)(object),
        }
    }
}

/// A body that is no kind of its own, such as autoscaling/v1 `Scale` (what
/// the `/scale` subresources take and answer): how the generic server reads
/// and writes it. The server builds and reads it as JSON (it is small and
/// off the hot path); the type decides which fields exist and the protobuf.
#[derive(Clone, Copy)]
pub struct BodyEntry {
    /// API group, `""` for core.
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Kind, e.g. `Scale`.
    pub kind: &'static str,
    /// A JSON body as the type reads and writes it (unknown fields dropped).
    pub normalize: fn(Value) -> Result<Value, String>,
    /// A protobuf message (an envelope's `raw`) as JSON.
    pub decode_proto: fn(&[u8]) -> Result<Value, String>,
    /// The body as its protobuf message.
    pub encode_proto: fn(Value) -> Result<Vec<u8>, String>,
    /// The type's OpenAPI schema (a `$ref`, its definitions added).
    pub schema: fn(&mut crate::openapi::Definitions) -> Value,
}

impl std::fmt::Debug for BodyEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "BodyEntry({}/{} {})",
            self.group, self.version, self.kind
        )
    }
}

impl BodyEntry {
    /// The entry of `T`, a body of `group/version` `kind`.
    pub fn of<T>(group: &'static str, version: &'static str, kind: &'static str) -> BodyEntry
    where
        T: serde::Serialize
            + serde::de::DeserializeOwned
            + proto::Message
            + crate::openapi::OpenApi,
    {
        BodyEntry {
            group,
            version,
            kind,
            normalize: normalize::<T>,
            decode_proto: decode_body_proto::<T>,
            encode_proto: encode_body_proto::<T>,
            schema: <T as crate::openapi::OpenApi>::schema,
        }
    }

    /// `apiVersion` of the body.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

fn normalize<T: serde::Serialize + serde::de::DeserializeOwned>(
    value: Value,
) -> Result<Value, String> {
    let typed: T = serde_json::from_value(value).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

fn decode_body_proto<T: serde::Serialize + proto::Message>(raw: &[u8]) -> Result<Value, String> {
    let typed = T::decode(raw).map_err(|e| format!("{e:?}"))?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

fn encode_body_proto<T: serde::de::DeserializeOwned + proto::Message>(
    value: Value,
) -> Result<Vec<u8>, String> {
    let typed: T = serde_json::from_value(value).map_err(|e| e.to_string())?;
    Ok(typed.encode_to_vec())
}

/// The kinds a server serves, looked up by group, version and plural, and the
/// bodies of its subresources, by group, version and kind.
#[derive(Clone, Debug, Default)]
pub struct Scheme {
    /// By group, version and plural: looked up with borrowed text on every
    /// request, iterated in that order.
    kinds: BTreeMap<String, BTreeMap<String, BTreeMap<String, KindEntry>>>,
    bodies: BTreeMap<(String, String, String), BodyEntry>,
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
            .entry(i.group.into())
            .or_default()
            .entry(i.version.into())
            .or_default()
            .insert(i.plural.into(), entry);
    }

    /// Adds a subresource body.
    pub fn add_body(&mut self, body: BodyEntry) {
        self.bodies.insert(
            (body.group.into(), body.version.into(), body.kind.into()),
            body,
        );
    }

    /// The subresource body `group/version` `kind`, if installed.
    pub fn bodies(&self) -> impl Iterator<Item = &BodyEntry> {
        self.bodies.values()
    }

    /// The body entry of `group/version` `kind`.
    pub fn body(&self, group: &str, version: &str, kind: &str) -> Option<&BodyEntry> {
        self.bodies
            .get(&(group.to_owned(), version.to_owned(), kind.to_owned()))
    }

    /// The kind served at `group/version/plural`.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<&KindEntry> {
        self.kinds.get(group)?.get(version)?.get(plural)
    }

    /// The kind `kind` of `group/version`, found by its name rather than its
    /// resource (a subresource's body that is also a resource: a Binding).
    pub fn get_kind(&self, group: &str, version: &str, kind: &str) -> Option<&KindEntry> {
        self.kinds
            .get(group)?
            .get(version)?
            .values()
            .find(|e| e.info.kind == kind)
    }

    /// The entry of the version `entry`'s objects are stored in: its hub, or
    /// itself when it is the hub. `None` when the hub version is not installed.
    pub fn storage_entry<'a>(&'a self, entry: &'a KindEntry) -> Option<&'a KindEntry> {
        match entry.hub() {
            None => Some(entry),
            Some(hub) => self.get(hub.group, hub.version, hub.plural),
        }
    }

    /// Every kind, ordered by group, version and plural (deterministic output).
    pub fn entries(&self) -> impl Iterator<Item = &KindEntry> {
        self.kinds
            .values()
            .flat_map(BTreeMap::values)
            .flat_map(BTreeMap::values)
    }
}
