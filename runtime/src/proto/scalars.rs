//! apimachinery's scalar types whose protobuf form Go writes by hand: Quantity
//! (its canonical text) and IntOrString (type, intVal, strVal). The meta types
//! written by hand (Time, MicroTime, FieldsV1) encode themselves in
//! `meta::protobuf`, above this module.

use super::describe::{FieldDescriptor, Shape};
use super::field::Field;
use super::wire::{self, DecodeError, Reader, RevBuf, WireType};
use crate::intstr::{IntOrString, Quantity};

/// resource.Quantity: a message with its text at field 1, always written (Go
/// writes the zero quantity as `"0"`, and cannot parse an empty string).
impl Field for Quantity {
    const WIRE: WireType = WireType::Len;

    /// Go's zero quantity, as it reads back (a map entry without a value).
    fn zero() -> Self {
        Quantity("0".to_owned())
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn write_rev(&self, number: u32, buf: &mut RevBuf) {
        let text = if self.0.is_empty() { "0" } else { &self.0 };
        let end = buf.len();
        buf.put_bytes(1, text.as_bytes());
        buf.close_len(number, end);
    }

    fn field_len(&self, number: u32) -> usize {
        let len = if self.0.is_empty() { 1 } else { self.0.len() };
        wire::len_field_len(number, wire::len_field_len(1, len))
    }

    fn merge_field(&mut self, wire: WireType, r: &mut Reader<'_>) -> Result<(), DecodeError> {
        Reader::expect(wire, WireType::Len)?;
        let mut body = r.nested()?;
        while !body.is_empty() {
            match body.key()? {
                (1, wire) => self.0.merge_field(wire, &mut body)?,
                (_, wire) => body.skip(wire)?,
            }
        }
        // A quantity message without text is the zero quantity, which is
        // written back as "0" (Go has no empty quantity either).
        if self.0.is_empty() {
            self.0.push('0');
        }
        Ok(())
    }

    fn shape() -> Shape {
        Shape::Message("Quantity", || {
            vec![FieldDescriptor {
                name: "string",
                number: 1,
                shape: Shape::Scalar("string"),
            }]
        })
    }
}

/// intstr.IntOrString: `type` (0 int, 1 string), `intVal` and `strVal`, all three
/// always written as Go's generated code does.
impl Field for IntOrString {
    const WIRE: WireType = WireType::Len;

    fn zero() -> Self {
        IntOrString::Int(0)
    }

    fn is_zero(&self) -> bool {
        *self == IntOrString::Int(0)
    }

    fn write_rev(&self, number: u32, buf: &mut RevBuf) {
        let (type_, int, text) = parts(self);
        let end = buf.len();
        buf.put_bytes(3, text.as_bytes());
        int.write_rev(2, buf);
        type_.write_rev(1, buf);
        buf.close_len(number, end);
    }

    fn field_len(&self, number: u32) -> usize {
        wire::len_field_len(number, body_len(self))
    }

    fn merge_field(&mut self, wire: WireType, r: &mut Reader<'_>) -> Result<(), DecodeError> {
        Reader::expect(wire, WireType::Len)?;
        let mut body = r.nested()?;
        let (mut type_, mut int, mut text) = (0i64, 0i32, String::new());
        while !body.is_empty() {
            match body.key()? {
                (1, wire) => type_.merge_field(wire, &mut body)?,
                (2, wire) => int.merge_field(wire, &mut body)?,
                (3, wire) => text.merge_field(wire, &mut body)?,
                (_, wire) => body.skip(wire)?,
            }
        }
        *self = match type_ {
            0 => IntOrString::Int(int),
            1 => IntOrString::String(text),
            other => {
                return Err(DecodeError::new(format!(
                    "IntOrString type {other} is neither 0 (int) nor 1 (string)"
                )));
            }
        };
        Ok(())
    }

    fn shape() -> Shape {
        Shape::Message("IntOrString", || {
            vec![
                FieldDescriptor {
                    name: "type",
                    number: 1,
                    shape: Shape::Scalar("int64"),
                },
                FieldDescriptor {
                    name: "intVal",
                    number: 2,
                    shape: Shape::Scalar("int32"),
                },
                FieldDescriptor {
                    name: "strVal",
                    number: 3,
                    shape: Shape::Scalar("string"),
                },
            ]
        })
    }
}

fn parts(v: &IntOrString) -> (i64, i32, &str) {
    match v {
        IntOrString::Int(i) => (0, *i, ""),
        IntOrString::String(s) => (1, 0, s),
    }
}

fn body_len(v: &IntOrString) -> usize {
    let (type_, int, text) = parts(v);
    type_.field_len(1) + int.field_len(2) + wire::len_field_len(3, text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Field + PartialEq + std::fmt::Debug>(v: T) {
        let mut buf = Vec::new();
        v.encode_field(3, &mut buf);
        assert_eq!(buf.len(), v.field_len(3));
        let mut r = Reader::new(&buf);
        let (number, wire) = r.key().unwrap();
        assert_eq!(number, 3);
        let mut back = T::zero();
        back.merge_field(wire, &mut r).unwrap();
        assert!(r.is_empty());
        assert_eq!(back, v);
    }

    #[test]
    fn doubles_and_boxes_round_trip() {
        round_trip(0.05_f64);
        round_trip(-1.5e300_f64);
        let meta = crate::meta::ObjectMeta {
            name: Some("boxed".into()),
            ..Default::default()
        };
        round_trip(Some(Box::new(meta)));
        // Go's float64 0.75 at field 9: key 0x49, then the IEEE bits little-endian.
        let mut buf = Vec::new();
        0.75_f64.encode_field(9, &mut buf);
        assert_eq!(buf, [0x49, 0, 0, 0, 0, 0, 0, 0xe8, 0x3f]);
    }

    #[test]
    fn scalars_round_trip() {
        round_trip(Quantity("500m".into()));
        round_trip(IntOrString::Int(-8080));
        round_trip(IntOrString::String("http".into()));
    }

    #[test]
    fn the_zero_quantity_is_written_as_0() {
        let mut buf = Vec::new();
        Quantity(String::new()).encode_field(1, &mut buf);
        assert_eq!(buf, [0x0a, 0x03, 0x0a, 0x01, b'0']);
    }

    #[test]
    fn bad_int_or_string_type() {
        let buf = [0x0a, 0x02, 0x08, 0x05];
        let mut r = Reader::new(&buf);
        let (_, wire) = r.key().unwrap();
        assert!(IntOrString::zero().merge_field(wire, &mut r).is_err());
    }
}
