//! [`DynObject`]: an object of any registered kind behind one type, as the
//! generic request path holds it. It is the kind's own Rust value, not a JSON
//! tree: protobuf decodes straight into it and encodes straight from it, JSON is
//! written from it by serde, and the strategy steps (status handling, generation,
//! defaults, validation, field selectors) run on the typed value.
//!
//! This module holds the trait and the values built on it ([`HubLink`]); every
//! kind implements it through [`crate::erased`], above the `Resource` trait.

use std::any::Any;
use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::meta::ObjectMeta;
use crate::resource_info::ResourceInfo;
use crate::validation::FieldErrors;

/// An object of some registered kind; implemented for every
/// [`Resource`](crate::resource::Resource) (in [`crate::erased`]).
///
/// Operations taking a second object expect one of the same kind; given another
/// kind they do nothing ([`DynObject::copy_status_from`]) or answer "not equal".
pub trait DynObject: Any + Send + Sync + fmt::Debug {
    /// The kind's facts.
    fn info(&self) -> &'static ResourceInfo;

    /// `metadata`.
    fn metadata(&self) -> &ObjectMeta;

    /// `metadata`, mutable.
    fn metadata_mut(&mut self) -> &mut ObjectMeta;

    /// A deep copy.
    fn clone_object(&self) -> Box<dyn DynObject>;

    /// For downcasting to the kind's type.
    fn as_any(&self) -> &dyn Any;

    /// For changing the object as the kind's type.
    fn as_any_mut(&mut self) -> &mut dyn Any;

    /// For taking the kind's value out (conversion between versions).
    fn into_any(self: Box<Self>) -> Box<dyn Any>;

    /// The object as serde sees it: `metadata` and the kind's fields, without
    /// `kind`/`apiVersion` (which the kind's type does not hold), unless
    /// [`DynObject::writes_type_meta`].
    fn as_serialize(&self) -> &dyn erased_serde::Serialize;

    /// Whether [`DynObject::as_serialize`] writes `kind` and `apiVersion`
    /// itself: an object held as JSON, whose keys go out sorted, as Go
    /// writes unstructured objects.
    fn writes_type_meta(&self) -> bool {
        false
    }

    /// The object as a JSON value, without `kind`/`apiVersion` (patches and
    /// printer-column paths work on JSON, as upstream's do).
    fn to_json_value(&self) -> Result<Value, String>;

    /// Appends the object's JSON, `kind` and `apiVersion` first, as Go writes
    /// it: the fast path of JSON responses, watch events and storage (no
    /// type erasure between the kind's type and the JSON writer).
    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), String>;

    /// The text of a field selector's field (`spec.nodeName`, `status.phase`),
    /// read from the typed value without building a JSON tree.
    fn field_text(&self, path: &str) -> Option<String>;

    /// The kind's defaults, recursively (on read from storage).
    fn apply_defaults(&mut self);

    /// Makes empty optional lists and maps absent, as an object written as
    /// protobuf reads back ([`crate::ApiType::clear_empty`]). A kind never
    /// written as protobuf has nothing to do.
    fn clear_empty(&mut self) {}

    /// The kind's prepare hook, defaults and validation; the errors found.
    fn admit(&mut self) -> FieldErrors;

    /// The kind's update checks against the stored object `old` (of the same
    /// kind; another kind is not checked).
    fn validate_update(&self, old: &dyn DynObject, errs: &mut FieldErrors);

    /// The kind's PrepareForCreate hook.
    fn prepare_create(&mut self);

    /// The kind's PrepareForUpdate hook for a write through `subresource`
    /// (`None`: the main endpoint), with the stored object `old`; a kind with
    /// a hook defaults the object first, so that the hook compares like with
    /// like (a kind without one pays nothing).
    fn prepare_update(&mut self, subresource: Option<&str>, old: &dyn DynObject);

    /// The update checks of a write through `subresource` (one of
    /// [`ResourceInfo::subresources`]) against the stored object `old`.
    fn validate_subresource_update(
        &self,
        subresource: &str,
        old: &dyn DynObject,
        errs: &mut FieldErrors,
    );

    /// The warnings of a write of this object (`old`: the stored one, on an
    /// update).
    fn warnings(&self, old: Option<&dyn DynObject>) -> Vec<String>;

    /// The kind's answer to a create that is not stored (a review).
    fn answer(&mut self);

    /// Clears the status (create through a kind's main endpoint).
    fn reset_status(&mut self);

    /// Takes `other`'s status.
    fn copy_status_from(&mut self, other: &dyn DynObject);

    /// Whether the desired state (all but metadata, and status for a kind with
    /// a `/status` subresource) equals `other`'s semantically: what bumps
    /// `metadata.generation`.
    fn spec_semantic_eq(&self, other: &dyn DynObject) -> bool;

    /// Exact equality with another object.
    fn object_eq(&self, other: &dyn DynObject) -> bool;

    /// Printer-column cells computed by the kind's hook, if it has one.
    fn table_cells(&self) -> Option<Vec<Value>>;

    /// The kind's graceful-deletion period for a delete asking for `requested`.
    fn deletion_grace_period(&self, requested: Option<i64>) -> Option<i64>;
}

impl Clone for Box<dyn DynObject> {
    fn clone(&self) -> Self {
        self.clone_object()
    }
}

/// A type-erased conversion of an object to another version of its kind.
pub type DynConversion = fn(Box<dyn DynObject>) -> Result<Box<dyn DynObject>, String>;

/// How a kind's served version reaches its hub version and back, type-erased
/// (`#[resource(hub = Path)]` sets it; a hub version has none).
#[derive(Clone, Copy, Debug)]
pub struct HubLink {
    /// The hub's facts; its version is the kind's storage version, e.g. `v2`.
    pub info: &'static ResourceInfo,
    /// An object of the served version as the hub's type.
    pub to_hub: DynConversion,
    /// An object of the hub's type as the served version.
    pub from_hub: DynConversion,
}

/// A serializer that adds `kind` and `apiVersion` in front of the struct it is
/// given, and passes everything else through: how an object, whose type holds
/// no type meta, is written in Go's field order (`kind`, `apiVersion`,
/// `metadata`, ...) in one pass.
pub struct WithTypeMeta<'a, S> {
    inner: S,
    kind: &'a str,
    api_version: &'a str,
}

impl<'a, S> WithTypeMeta<'a, S> {
    /// Wraps `inner`.
    pub fn new(inner: S, kind: &'a str, api_version: &'a str) -> WithTypeMeta<'a, S> {
        WithTypeMeta {
            inner,
            kind,
            api_version,
        }
    }
}

macro_rules! forward {
    ($($method:ident($($arg:ident: $t:ty),*) -> $ret:ty;)*) => {
        $(fn $method(self, $($arg: $t),*) -> Result<$ret, S::Error> {
            self.inner.$method($($arg),*)
        })*
    };
}

impl<S: Serializer> Serializer for WithTypeMeta<'_, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = S::SerializeSeq;
    type SerializeTuple = S::SerializeTuple;
    type SerializeTupleStruct = S::SerializeTupleStruct;
    type SerializeTupleVariant = S::SerializeTupleVariant;
    type SerializeMap = S::SerializeMap;
    type SerializeStruct = S::SerializeStruct;
    type SerializeStructVariant = S::SerializeStructVariant;

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<S::SerializeStruct, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = self.inner.serialize_struct(name, len + 2)?;
        out.serialize_field("kind", self.kind)?;
        out.serialize_field("apiVersion", self.api_version)?;
        Ok(out)
    }

    forward! {
        serialize_bool(v: bool) -> S::Ok;
        serialize_i8(v: i8) -> S::Ok;
        serialize_i16(v: i16) -> S::Ok;
        serialize_i32(v: i32) -> S::Ok;
        serialize_i64(v: i64) -> S::Ok;
        serialize_u8(v: u8) -> S::Ok;
        serialize_u16(v: u16) -> S::Ok;
        serialize_u32(v: u32) -> S::Ok;
        serialize_u64(v: u64) -> S::Ok;
        serialize_f32(v: f32) -> S::Ok;
        serialize_f64(v: f64) -> S::Ok;
        serialize_char(v: char) -> S::Ok;
        serialize_str(v: &str) -> S::Ok;
        serialize_bytes(v: &[u8]) -> S::Ok;
        serialize_none() -> S::Ok;
        serialize_unit() -> S::Ok;
        serialize_unit_struct(name: &'static str) -> S::Ok;
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str) -> S::Ok;
        serialize_seq(len: Option<usize>) -> S::SerializeSeq;
        serialize_tuple(len: usize) -> S::SerializeTuple;
        serialize_tuple_struct(name: &'static str, len: usize) -> S::SerializeTupleStruct;
        serialize_tuple_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> S::SerializeTupleVariant;
        serialize_map(len: Option<usize>) -> S::SerializeMap;
        serialize_struct_variant(name: &'static str, index: u32, variant: &'static str, len: usize) -> S::SerializeStructVariant;
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.inner.serialize_some(value)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.inner.serialize_newtype_struct(name, value)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.inner
            .serialize_newtype_variant(name, index, variant, value)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}
