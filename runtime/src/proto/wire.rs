//! The protobuf wire format itself: varints, field keys, length-delimited values
//! and skipping unknown fields, with the limits a server needs against hostile
//! input (nesting depth, lengths past the end of the buffer).
//!
//! Hand-written rather than taken from `prost::encoding`: that module is
//! `#[doc(hidden)]` (not a public API), and a decoder for untrusted request bodies
//! wants its own errors that say where the input went wrong.

use std::fmt;

/// How deep messages may nest in one decode. Kubernetes objects nest about ten
/// levels (Pod -> spec -> containers -> probe -> httpGet -> ...); the limit only
/// stops a crafted body from recursing the decoder into a stack overflow.
pub const MAX_DEPTH: u32 = 64;

/// The wire type of a field, the low three bits of its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireType {
    /// int32, int64, uint*, bool, enums.
    Varint,
    /// fixed64, sfixed64, double.
    Fixed64,
    /// string, bytes, embedded messages, packed repeated scalars.
    Len,
    /// Deprecated groups: only skipped.
    StartGroup,
    /// End of a deprecated group.
    EndGroup,
    /// fixed32, sfixed32, float.
    Fixed32,
}

impl WireType {
    fn from_bits(bits: u64) -> Result<WireType, DecodeError> {
        Ok(match bits {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Len,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::Fixed32,
            other => return Err(DecodeError::new(format!("invalid wire type {other}"))),
        })
    }

    fn bits(self) -> u64 {
        match self {
            WireType::Varint => 0,
            WireType::Fixed64 => 1,
            WireType::Len => 2,
            WireType::StartGroup => 3,
            WireType::EndGroup => 4,
            WireType::Fixed32 => 5,
        }
    }
}

/// Why bytes could not be decoded as the message they were meant to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    message: String,
}

impl DecodeError {
    /// An error with this description.
    pub fn new(message: impl Into<String>) -> DecodeError {
        DecodeError {
            message: message.into(),
        }
    }

    fn truncated() -> DecodeError {
        DecodeError::new("unexpected end of data")
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DecodeError {}

/// Appends `value` as a base-128 varint.
pub fn put_varint(buf: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        buf.push((value as u8) | 0x80);
        value >>= 7;
    }
    buf.push(value as u8);
}

/// The length of `value` as a varint.
pub const fn varint_len(value: u64) -> usize {
    // One byte per started group of 7 bits; 0 takes one byte.
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Appends the key of field `number` with wire type `wire`.
pub fn put_key(buf: &mut Vec<u8>, number: u32, wire: WireType) {
    put_varint(buf, (u64::from(number) << 3) | wire.bits());
}

/// The length of the key of field `number`.
pub const fn key_len(number: u32) -> usize {
    varint_len((number as u64) << 3)
}

/// Appends a length-delimited value: its length, then the bytes.
pub fn put_bytes(buf: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    put_key(buf, number, WireType::Len);
    put_varint(buf, bytes.len() as u64);
    buf.extend_from_slice(bytes);
}

/// The encoded length of a length-delimited field with `len` bytes of content.
pub const fn len_field_len(number: u32, len: usize) -> usize {
    key_len(number) + varint_len(len as u64) + len
}

/// A buffer filled from its end, as Go's generated marshallers fill theirs: a
/// nested message is written first and its length after it (in front of it), so
/// no message length is ever computed twice, however deep the nesting.
#[derive(Debug, Default)]
pub struct RevBuf {
    buf: Vec<u8>,
    /// The written bytes are `buf[pos..]`.
    pos: usize,
}

impl RevBuf {
    /// An empty buffer with room for `capacity` bytes before it grows.
    pub fn with_capacity(capacity: usize) -> RevBuf {
        RevBuf {
            buf: vec![0; capacity],
            pos: capacity,
        }
    }

    /// How many bytes were written.
    pub fn len(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The written bytes, in order.
    pub fn as_slice(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// The written bytes as a vector (no copy when the capacity was exact).
    pub fn into_vec(mut self) -> Vec<u8> {
        if self.pos == 0 {
            return self.buf;
        }
        self.buf.drain(..self.pos);
        self.buf
    }

    #[inline]
    fn reserve(&mut self, n: usize) {
        if self.pos >= n {
            return;
        }
        self.grow(n);
    }

    #[cold]
    fn grow(&mut self, n: usize) {
        let len = self.len();
        let capacity = (self.buf.len() * 2).max(len + n).max(64);
        let mut grown = vec![0; capacity];
        grown[capacity - len..].copy_from_slice(self.as_slice());
        self.buf = grown;
        self.pos = capacity - len;
    }

    /// Prepends raw bytes.
    #[inline]
    pub fn put_slice(&mut self, bytes: &[u8]) {
        self.reserve(bytes.len());
        self.pos -= bytes.len();
        self.buf[self.pos..self.pos + bytes.len()].copy_from_slice(bytes);
    }

    /// Prepends a varint, written in place.
    #[inline]
    pub fn put_varint(&mut self, mut value: u64) {
        if value < 0x80 {
            self.reserve(1);
            self.pos -= 1;
            self.buf[self.pos] = value as u8;
            return;
        }
        let n = varint_len(value);
        self.reserve(n);
        self.pos -= n;
        for byte in &mut self.buf[self.pos..self.pos + n] {
            *byte = (value as u8) | 0x80;
            value >>= 7;
        }
        self.buf[self.pos + n - 1] &= 0x7f;
    }

    /// Prepends the key of field `number`.
    pub fn put_key(&mut self, number: u32, wire: WireType) {
        self.put_varint((u64::from(number) << 3) | wire.bits());
    }

    /// Prepends a whole length-delimited field.
    pub fn put_bytes(&mut self, number: u32, bytes: &[u8]) {
        self.put_slice(bytes);
        self.put_varint(bytes.len() as u64);
        self.put_key(number, WireType::Len);
    }

    /// Prepends the length and key of a length-delimited field whose content was
    /// written since the buffer had `end` bytes.
    pub fn close_len(&mut self, number: u32, end: usize) {
        let len = self.len() - end;
        self.put_varint(len as u64);
        self.put_key(number, WireType::Len);
    }
}

/// A cursor over the bytes of one message, with the nesting depth it sits at.
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    depth: u32,
}

impl<'a> Reader<'a> {
    /// A reader over a top-level message.
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, depth: 0 }
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Reads a varint (at most ten bytes, as the format allows).
    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for (i, &byte) in self.buf.iter().enumerate().take(10) {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte < 0x80 {
                self.buf = &self.buf[i + 1..];
                return Ok(value);
            }
        }
        if self.buf.len() < 10 {
            Err(DecodeError::truncated())
        } else {
            Err(DecodeError::new("varint longer than ten bytes"))
        }
    }

    /// Reads a field key: its number and wire type.
    pub fn key(&mut self) -> Result<(u32, WireType), DecodeError> {
        let key = self.varint()?;
        let number = key >> 3;
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return Err(DecodeError::new(format!("invalid field number {number}")));
        }
        Ok((number as u32, WireType::from_bits(key & 7)?))
    }

    /// Reads `n` raw bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.buf.len() {
            return Err(DecodeError::new(format!(
                "length {n} is past the end of the data ({} bytes left)",
                self.buf.len()
            )));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    /// Reads the content of a length-delimited value.
    pub fn len_delimited(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.varint()?;
        let len = usize::try_from(len).map_err(|_| DecodeError::new("length out of range"))?;
        self.take(len)
    }

    /// A reader over an embedded message one level deeper; fails past [`MAX_DEPTH`].
    pub fn nested(&mut self) -> Result<Reader<'a>, DecodeError> {
        if self.depth >= MAX_DEPTH {
            return Err(DecodeError::new(format!(
                "messages nested deeper than {MAX_DEPTH} levels"
            )));
        }
        let buf = self.len_delimited()?;
        Ok(Reader {
            buf,
            depth: self.depth + 1,
        })
    }

    /// Skips the value of a field this decoder does not know, as Go's
    /// generated code does for numbers added by newer versions.
    pub fn skip(&mut self, wire: WireType) -> Result<(), DecodeError> {
        match wire {
            WireType::Varint => self.varint().map(drop),
            WireType::Fixed64 => self.take(8).map(drop),
            WireType::Fixed32 => self.take(4).map(drop),
            WireType::Len => self.len_delimited().map(drop),
            WireType::StartGroup => Err(DecodeError::new("groups are not supported")),
            WireType::EndGroup => Err(DecodeError::new("unexpected end of group")),
        }
    }

    /// Fails unless the field has wire type `expected`.
    pub fn expect(wire: WireType, expected: WireType) -> Result<(), DecodeError> {
        if wire == expected {
            Ok(())
        } else {
            Err(DecodeError::new(format!(
                "wire type {wire:?} where {expected:?} was expected"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        for v in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            assert_eq!(buf.len(), varint_len(v), "{v}");
            let mut r = Reader::new(&buf);
            assert_eq!(r.varint().unwrap(), v);
            assert!(r.is_empty());
        }
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(127), 1);
        assert_eq!(varint_len(128), 2);
    }

    #[test]
    fn reverse_writing_grows_and_keeps_order() {
        let mut r = RevBuf::with_capacity(1);
        r.put_slice(b"world");
        r.put_slice(b"hello ");
        r.put_varint(300);
        assert_eq!(r.as_slice(), b"\xac\x02hello world");
        assert_eq!(r.into_vec(), b"\xac\x02hello world");
    }

    #[test]
    fn hostile_input_is_an_error() {
        assert!(Reader::new(&[0x80]).varint().is_err());
        assert!(Reader::new(&[0xff; 11]).varint().is_err());
        // A length far past the end.
        assert!(Reader::new(&[0x0a, 0xff, 0xff, 0x03]).nested().is_err());
        // Field number 0.
        assert!(Reader::new(&[0x00]).key().is_err());
        // Wire type 7.
        assert!(Reader::new(&[0x0f]).key().is_err());
    }

    #[test]
    fn depth_is_bounded() {
        let mut r = Reader {
            buf: &[0],
            depth: MAX_DEPTH,
        };
        assert!(r.nested().is_err());
    }
}
