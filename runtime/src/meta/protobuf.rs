//! The protobuf form Go writes by hand for meta types: Time and MicroTime (a
//! Timestamp message, empty for the zero time) and FieldsV1 (raw JSON bytes).
//! The other meta types derive theirs from the field numbers they declare.

use jiff::Timestamp;

use super::{FieldsV1, MicroTime, Time};
use crate::proto::wire::{self, DecodeError, Reader, RevBuf, WireType};
use crate::proto::{Field, FieldDescriptor, Shape};

/// Go's zero `time.Time` (January 1 of year 1, UTC), which Go encodes as an
/// empty message and Rust holds as an absent `Option<Time>`.
const GO_ZERO_SECONDS: i64 = -62_135_596_800;

fn timestamp_fields() -> Vec<FieldDescriptor> {
    vec![
        FieldDescriptor {
            name: "seconds",
            number: 1,
            shape: Shape::Scalar("int64"),
        },
        FieldDescriptor {
            name: "nanos",
            number: 2,
            shape: Shape::Scalar("int32"),
        },
    ]
}

/// Seconds and nanoseconds of a timestamp message body (both always written).
fn timestamp_len(ts: Timestamp) -> usize {
    let (seconds, nanos) = (ts.as_second(), ts.subsec_nanosecond());
    i64::field_len(&seconds, 1) + i32::field_len(&nanos, 2)
}

fn put_timestamp(ts: Timestamp, number: u32, buf: &mut RevBuf) {
    let end = buf.len();
    if ts.as_second() != GO_ZERO_SECONDS || ts.subsec_nanosecond() != 0 {
        ts.subsec_nanosecond().write_rev(2, buf);
        ts.as_second().write_rev(1, buf);
    }
    buf.close_len(number, end);
}

fn timestamp_field_len(ts: Timestamp, number: u32) -> usize {
    if ts.as_second() == GO_ZERO_SECONDS && ts.subsec_nanosecond() == 0 {
        return wire::len_field_len(number, 0);
    }
    wire::len_field_len(number, timestamp_len(ts))
}

fn read_timestamp(wire: WireType, r: &mut Reader<'_>) -> Result<(i64, i32), DecodeError> {
    Reader::expect(wire, WireType::Len)?;
    let mut body = r.nested()?;
    if body.is_empty() {
        return Ok((GO_ZERO_SECONDS, 0));
    }
    let (mut seconds, mut nanos) = (0i64, 0i32);
    while !body.is_empty() {
        match body.key()? {
            (1, wire) => seconds.merge_field(wire, &mut body)?,
            (2, wire) => nanos.merge_field(wire, &mut body)?,
            (_, wire) => body.skip(wire)?,
        }
    }
    Ok((seconds, nanos))
}

fn go_zero() -> Timestamp {
    Timestamp::from_second(GO_ZERO_SECONDS).unwrap_or(Timestamp::MIN)
}

fn timestamp(seconds: i64, nanos: i32) -> Result<Timestamp, DecodeError> {
    Timestamp::new(seconds, nanos)
        .map_err(|_| DecodeError::new(format!("timestamp {seconds}s {nanos}ns out of range")))
}

/// A Timestamp message type: `$keep_nanos` says whether the nanoseconds survive
/// decoding.
macro_rules! timestamp_field {
    ($t:ident, $keep_nanos:expr) => {
        impl Field for $t {
            const WIRE: WireType = WireType::Len;
            const ZERO_IS_NONE: bool = true;

            fn zero() -> Self {
                $t(go_zero())
            }

            fn is_zero(&self) -> bool {
                self.0 == go_zero()
            }

            fn write_rev(&self, number: u32, buf: &mut RevBuf) {
                put_timestamp(self.0, number, buf);
            }

            fn field_len(&self, number: u32) -> usize {
                timestamp_field_len(self.0, number)
            }

            fn merge_field(
                &mut self,
                wire: WireType,
                r: &mut Reader<'_>,
            ) -> Result<(), DecodeError> {
                let (seconds, nanos) = read_timestamp(wire, r)?;
                let nanos = if $keep_nanos { nanos } else { 0 };
                *self = $t(timestamp(seconds, nanos)?);
                Ok(())
            }

            fn shape() -> Shape {
                Shape::Message(stringify!($t), timestamp_fields)
            }
        }
    };
}

// metav1.Time: whole seconds, as its JSON form keeps (Go drops the nanoseconds
// on decode for the same reason).
timestamp_field!(Time, false);
// metav1.MicroTime: seconds and nanoseconds (JSON keeps microseconds).
timestamp_field!(MicroTime, true);

/// metav1.FieldsV1: the managed-fields trie as raw JSON bytes at field 1.
impl Field for FieldsV1 {
    const WIRE: WireType = WireType::Len;

    fn zero() -> Self {
        FieldsV1::default()
    }

    fn is_zero(&self) -> bool {
        self.is_null()
    }

    fn write_rev(&self, number: u32, buf: &mut RevBuf) {
        let end = buf.len();
        buf.put_bytes(1, self.raw());
        buf.close_len(number, end);
    }

    fn field_len(&self, number: u32) -> usize {
        wire::len_field_len(number, wire::len_field_len(1, self.raw().len()))
    }

    fn merge_field(&mut self, wire: WireType, r: &mut Reader<'_>) -> Result<(), DecodeError> {
        Reader::expect(wire, WireType::Len)?;
        let mut body = r.nested()?;
        while !body.is_empty() {
            match body.key()? {
                (1, WireType::Len) => {
                    let raw = body.len_delimited()?;
                    *self = FieldsV1::from_raw(raw)
                        .map_err(|e| DecodeError::new(format!("fieldsV1 is not JSON: {e}")))?;
                }
                (_, wire) => body.skip(wire)?,
            }
        }
        Ok(())
    }

    fn shape() -> Shape {
        Shape::Message("FieldsV1", || {
            vec![FieldDescriptor {
                name: "Raw",
                number: 1,
                shape: Shape::Scalar("bytes"),
            }]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::value;

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
    fn times_and_fields_round_trip() {
        round_trip(Time(Timestamp::from_second(1_700_000_000).unwrap()));
        round_trip(MicroTime(
            Timestamp::new(1_700_000_000, 123_456_000).unwrap(),
        ));
        round_trip(FieldsV1::from_raw(br#"{"f:metadata":{}}"#).unwrap());
    }

    #[test]
    fn an_absent_time_is_an_empty_message() {
        let mut rev = RevBuf::default();
        value::write_rev::<Time>(&None, 8, &mut rev);
        let buf = rev.into_vec();
        assert_eq!(buf, [0x42, 0x00]);
        let mut r = Reader::new(&buf);
        let (_, wire) = r.key().unwrap();
        let mut back = Some(Time::now());
        back = back.filter(|_| false);
        value::merge(&mut back, wire, &mut r).unwrap();
        assert_eq!(back, None);
    }

    #[test]
    fn the_zero_time_is_none_even_in_a_pointer_field() {
        let buf = [0x42, 0x00];
        let mut r = Reader::new(&buf);
        let (_, wire) = r.key().unwrap();
        let mut v: Option<Time> = None;
        Field::merge_field(&mut v, wire, &mut r).unwrap();
        assert_eq!(v, None);
    }
}
