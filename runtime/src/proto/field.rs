//! [`Field`]: how one Rust type travels as a protobuf field, with the semantics
//! of the Go code generated for Kubernetes (gogo-protobuf): a non-pointer field is
//! always written, even at its zero value; a pointer (`Option`) only when set;
//! repeated fields one entry per element; maps as entries sorted by key.

use std::collections::BTreeMap;

use super::Message;
use super::describe::Shape;
use super::wire::{self, DecodeError, Reader, RevBuf, WireType};

/// A value that can be a field of a protobuf message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no protobuf encoding",
    note = "a struct deriving ApiType becomes a protobuf message when its fields carry #[api(proto = N)]"
)]
pub trait Field: Sized {
    /// The wire type of one value (a repeated scalar may also arrive packed).
    const WIRE: WireType;

    /// The Go zero value: what an absent field decodes to.
    fn zero() -> Self;

    /// Whether this is the Go zero value (a value-mode `Option` decodes it as None).
    fn is_zero(&self) -> bool;

    /// Prepends this value as field `number`, always (Go's non-pointer field).
    fn write_rev(&self, number: u32, buf: &mut RevBuf);

    /// Appends this value as field `number`.
    fn encode_field(&self, number: u32, buf: &mut Vec<u8>) {
        let mut rev = RevBuf::with_capacity(self.field_len(number));
        self.write_rev(number, &mut rev);
        buf.extend_from_slice(rev.as_slice());
    }

    /// The encoded length of [`Field::encode_field`].
    fn field_len(&self, number: u32) -> usize;

    /// Merges one occurrence of the field from the reader.
    fn merge_field(&mut self, wire: WireType, r: &mut Reader<'_>) -> Result<(), DecodeError>;

    /// The field's type for descriptors (the check against upstream's .proto).
    fn shape() -> Shape;

    /// Whether Rust has no value for the zero of this type other than an absent
    /// `Option`: Go's zero time (January 1 of year 1) decodes as None even into a
    /// pointer field, as Go's JSON writes it as `null`.
    const ZERO_IS_NONE: bool = false;
}

impl Field for String {
    const WIRE: WireType = WireType::Len;

    fn zero() -> Self {
        String::new()
    }

    fn is_zero(&self) -> bool {
        self.is_empty()
    }

    fn write_rev(&self, number: u32, buf: &mut RevBuf) {
        buf.put_bytes(number, self.as_bytes());
    }

    fn field_len(&self, number: u32) -> usize {
        wire::len_field_len(number, self.len())
    }

    fn merge_field(&mut self, wire: WireType, r: &mut Reader<'_>) -> Result<(), DecodeError> {
        Reader::expect(wire, WireType::Len)?;
        let bytes = r.len_delimited()?;
        let text = std::str::from_utf8(bytes)
            .map_err(|_| DecodeError::new("string field is not valid UTF-8"))?;
        self.clear();
        self.push_str(text);
        Ok(())
    }

    fn shape() -> Shape {
        Shape::Scalar("string")
    }
}

/// Varint scalars: how each converts to and from the 64 bits on the wire.
macro_rules! varint_field {
    ($t:ty, $name:literal, |$v:ident| $to:expr, |$w:ident| $from:expr) => {
        impl Field for $t {
            const WIRE: WireType = WireType::Varint;

            fn zero() -> Self {
                <$t>::default()
            }

            fn is_zero(&self) -> bool {
                *self == <$t>::default()
            }

            fn write_rev(&self, number: u32, buf: &mut RevBuf) {
                let $v = *self;
                buf.put_varint($to);
                buf.put_key(number, WireType::Varint);
            }

            fn field_len(&self, number: u32) -> usize {
                let $v = *self;
                wire::key_len(number) + wire::varint_len($to)
            }

            fn merge_field(
                &mut self,
                wire: WireType,
                r: &mut Reader<'_>,
            ) -> Result<(), DecodeError> {
                Reader::expect(wire, WireType::Varint)?;
                let $w = r.varint()?;
                *self = $from;
                Ok(())
            }

            fn shape() -> Shape {
                Shape::Scalar($name)
            }
        }
    };
}

// int32 is sign-extended to 64 bits on the wire and truncated back, as protobuf
// specifies (a negative int32 takes ten bytes).
varint_field!(i32, "int32", |v| v as i64 as u64, |w| w as i32);
varint_field!(i64, "int64", |v| v as u64, |w| w as i64);
varint_field!(bool, "bool", |v| u64::from(v), |w| w != 0);

/// `double`: eight little-endian bytes (wire type fixed64), as Go's float64.
impl Field for f64 {
    const WIRE: WireType = WireType::Fixed64;

    fn zero() -> Self {
        0.0
    }

    fn is_zero(&self) -> bool {
        *self == 0.0
    }

    fn write_rev(&self, number: u32, buf: &mut RevBuf) {
        buf.put_slice(&self.to_bits().to_le_bytes());
        buf.put_key(number, WireType::Fixed64);
    }

    fn field_len(&self, number: u32) -> usize {
        wire::key_len(number) + 8
    }

    fn merge_field(&mut self, wire: WireType, r: &mut Reader<'_>) -> Result<(), DecodeError> {
        Reader::expect(wire, WireType::Fixed64)?;
        let bytes: [u8; 8] = r.take(8)?.try_into().expect("eight bytes");
        *self = f64::from_bits(u64::from_le_bytes(bytes));
        Ok(())
    }

    fn shape() -> Shape {
        Shape::Scalar("double")
    }
}

impl Field for crate::bytes::ByteString {
    const WIRE: WireType = WireType::Len;

    fn zero() -> Self {
        crate::bytes::ByteString(Vec::new())
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn write_rev(&self, number: u32, buf: &mut RevBuf) {
        buf.put_bytes(number, &self.0);
    }

    fn field_len(&self, number: u32) -> usize {
        wire::len_field_len(number, self.0.len())
    }

    fn merge_field(&mut self, wire: WireType, r: &mut Reader<'_>) -> Result<(), DecodeError> {
        Reader::expect(wire, WireType::Len)?;
        self.0 = r.len_delimited()?.to_vec();
        Ok(())
    }

    fn shape() -> Shape {
        Shape::Scalar("bytes")
    }
}

/// Every message is a length-delimited field.
impl<M: Message> Field for M {
    const WIRE: WireType = WireType::Len;

    fn zero() -> Self {
        M::default()
    }

    fn is_zero(&self) -> bool {
        // A message field that was present stays present (Go writes `{}`).
        false
    }

    fn write_rev(&self, number: u32, buf: &mut RevBuf) {
        let end = buf.len();
        self.write_fields_rev(buf);
        buf.close_len(number, end);
    }

    fn field_len(&self, number: u32) -> usize {
        wire::len_field_len(number, self.encoded_len())
    }

    fn merge_field(&mut self, wire: WireType, r: &mut Reader<'_>) -> Result<(), DecodeError> {
        Reader::expect(wire, WireType::Len)?;
        let mut inner = r.nested()?;
        self.merge(&mut inner)
    }

    fn shape() -> Shape {
        Shape::Message(M::NAME, M::describe)
    }
}

/// A Go pointer field: written only when set.
impl<T: Field> Field for Option<T> {
    const WIRE: WireType = T::WIRE;

    fn zero() -> Self {
        None
    }

    fn is_zero(&self) -> bool {
        self.is_none()
    }

    fn write_rev(&self, number: u32, buf: &mut RevBuf) {
        if let Some(v) = self {
            v.write_rev(number, buf);
        }
    }

    fn field_len(&self, number: u32) -> usize {
        self.as_ref().map_or(0, |v| v.field_len(number))
    }

    fn merge_field(&mut self, wire: WireType, r: &mut Reader<'_>) -> Result<(), DecodeError> {
        let v = self.get_or_insert_with(T::zero);
        v.merge_field(wire, r)?;
        if T::ZERO_IS_NONE && v.is_zero() {
            *self = None;
        }
        Ok(())
    }

    fn shape() -> Shape {
        T::shape()
    }
}

/// A repeated field: one entry per element; repeated scalars are also accepted
/// packed, as every protobuf decoder must.
impl<T: Field> Field for Vec<T> {
    const WIRE: WireType = T::WIRE;

    fn zero() -> Self {
        Vec::new()
    }

    fn is_zero(&self) -> bool {
        self.is_empty()
    }

    fn write_rev(&self, number: u32, buf: &mut RevBuf) {
        for v in self.iter().rev() {
            v.write_rev(number, buf);
        }
    }

    fn field_len(&self, number: u32) -> usize {
        self.iter().map(|v| v.field_len(number)).sum()
    }

    fn merge_field(&mut self, wire: WireType, r: &mut Reader<'_>) -> Result<(), DecodeError> {
        if wire == WireType::Len && T::WIRE != WireType::Len {
            let mut packed = r.nested()?;
            while !packed.is_empty() {
                let mut v = T::zero();
                v.merge_field(T::WIRE, &mut packed)?;
                self.push(v);
            }
            return Ok(());
        }
        let mut v = T::zero();
        v.merge_field(wire, r)?;
        // Most repeated fields of a decoded object hold one to three entries (a
        // pod's containers, ports, volumes), and the object may live long in the
        // watch cache: grow those exactly instead of to `Vec`'s first four slots.
        if self.len() == self.capacity() && self.len() < 4 {
            self.reserve_exact(1);
        }
        self.push(v);
        Ok(())
    }

    fn shape() -> Shape {
        Shape::Repeated(Box::new(T::shape()))
    }
}

/// A `map<string, V>`: one entry message `{1: key, 2: value}` per pair, in key
/// order (Go sorts the keys so that encodings are deterministic).
impl<V: Field> Field for BTreeMap<String, V> {
    const WIRE: WireType = WireType::Len;

    fn zero() -> Self {
        BTreeMap::new()
    }

    fn is_zero(&self) -> bool {
        self.is_empty()
    }

    fn write_rev(&self, number: u32, buf: &mut RevBuf) {
        for (k, v) in self.iter().rev() {
            let end = buf.len();
            v.write_rev(2, buf);
            k.write_rev(1, buf);
            buf.close_len(number, end);
        }
    }

    fn field_len(&self, number: u32) -> usize {
        self.iter()
            .map(|(k, v)| wire::len_field_len(number, k.field_len(1) + v.field_len(2)))
            .sum()
    }

    fn merge_field(&mut self, wire: WireType, r: &mut Reader<'_>) -> Result<(), DecodeError> {
        Reader::expect(wire, WireType::Len)?;
        let mut entry = r.nested()?;
        let (mut key, mut value) = (String::new(), V::zero());
        while !entry.is_empty() {
            match entry.key()? {
                (1, wire) => key.merge_field(wire, &mut entry)?,
                (2, wire) => value.merge_field(wire, &mut entry)?,
                (_, wire) => entry.skip(wire)?,
            }
        }
        self.insert(key, value);
        Ok(())
    }

    fn shape() -> Shape {
        Shape::Map(Box::new(String::shape()), Box::new(V::shape()))
    }
}

/// Go non-pointer fields that Rust holds as `Option<T>` (`omitempty` in JSON): the
/// zero value and absence are the same thing. Such a field is always written (None
/// as the zero value), and a zero value read back is None, so that a Go client's
/// `generateName: ""` does not become an empty string in the object.
pub mod value {
    use super::{DecodeError, Field, Reader, RevBuf, WireType};

    /// Prepends the field, None as the zero value.
    pub fn write_rev<T: Field>(v: &Option<T>, number: u32, buf: &mut RevBuf) {
        match v {
            Some(v) => v.write_rev(number, buf),
            None => T::zero().write_rev(number, buf),
        }
    }

    /// The encoded length of the field.
    pub fn len<T: Field>(v: &Option<T>, number: u32) -> usize {
        match v {
            Some(v) => v.field_len(number),
            None => T::zero().field_len(number),
        }
    }

    /// Merges one occurrence; a zero result is None.
    pub fn merge<T: Field>(
        v: &mut Option<T>,
        wire: WireType,
        r: &mut Reader<'_>,
    ) -> Result<(), DecodeError> {
        let mut inner = v.take().unwrap_or_else(T::zero);
        inner.merge_field(wire, r)?;
        *v = (!inner.is_zero()).then_some(inner);
        Ok(())
    }
}
