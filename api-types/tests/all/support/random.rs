//! Random protobuf messages from a kind's own message descriptors, with values
//! a Go client could send (well-formed where a type has a format of its own).

use kapi_runtime::proto::{FieldDescriptor, Shape};

use super::Rng;

/// A random encoding of message `name` with `fields`.
pub fn random_message(rng: &mut Rng, name: &str, fields: &[FieldDescriptor]) -> Vec<u8> {
    message(rng, name, fields, 0)
}

/// Value generators on top of the shared seeded generator.
trait Values {
    fn chance(&mut self, percent: usize) -> bool;
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str;
    fn text(&mut self) -> String;
    fn int(&mut self, bits: u32) -> i64;
}

impl Values for Rng {
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// Short text, sometimes empty, sometimes beyond ASCII.
    fn text(&mut self) -> String {
        const PARTS: &[&str] = &["a", "web", "-", ".", "x9", "ñ", "日本", " ", "\"", "/", "Z"];
        (0..self.below(6)).map(|_| self.pick(PARTS)).collect()
    }

    fn int(&mut self, bits: u32) -> i64 {
        match self.below(4) {
            0 => 0,
            1 => self.below(100) as i64,
            2 => -(self.below(1000) as i64),
            _ => {
                let v = self.next() as i64;
                if bits == 32 { v as i32 as i64 } else { v }
            }
        }
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, number: u32, wire: u8) {
    varint(out, (u64::from(number) << 3) | u64::from(wire));
}

fn delimited(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    key(out, number, 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A random message of the given fields, as protobuf bytes.
pub fn message(rng: &mut Rng, name: &str, fields: &[FieldDescriptor], depth: usize) -> Vec<u8> {
    let mut out = Vec::new();
    match name {
        // Well-formed values for types with a format of their own.
        "Time" | "MicroTime" => {
            key(&mut out, 1, 0);
            varint(&mut out, rng.below(4_000_000_000) as u64);
            if name == "MicroTime" && rng.chance(50) {
                key(&mut out, 2, 0);
                varint(&mut out, rng.below(1_000_000) as u64 * 1000);
            }
            return out;
        }
        "Quantity" => {
            let q = rng.pick(&[
                "0", "1", "100m", "2Gi", "0.5", "1500", "64Mi", "3k", "1e3", "250u",
            ]);
            delimited(&mut out, 1, q.as_bytes());
            return out;
        }
        "IntOrString" => {
            if rng.chance(50) {
                key(&mut out, 1, 0);
                varint(&mut out, 0);
                key(&mut out, 2, 0);
                varint(&mut out, rng.int(32) as u64);
            } else {
                key(&mut out, 1, 0);
                varint(&mut out, 1);
                delimited(&mut out, 3, rng.text().as_bytes());
            }
            return out;
        }
        "FieldsV1" => {
            let raw = rng.pick(&[
                r#"{}"#,
                r#"{"f:metadata":{"f:labels":{".":{}}}}"#,
                r#"{"f:data":{"f:k":{}}}"#,
            ]);
            delimited(&mut out, 1, raw.as_bytes());
            return out;
        }
        // A raw embedded document (runtime.RawExtension, apiextensions' JSON):
        // JSON, as clients send it, never empty (Go's JSON decoding leaves the
        // field out for `null` rather than holding an empty document).
        // Documents that are not JSON are protobuf_hostile's business.
        "RawExtension" | "JSON" => {
            let json = rng.pick(&[
                r#"{}"#,
                r#"{"a":1}"#,
                r#"{"kind":"Pod","apiVersion":"v1","spec":{"x":["y",2.5,true]}}"#,
                r#"[1,"two",{}]"#,
                r#""text""#,
                r#"42"#,
            ]);
            delimited(&mut out, 1, json.as_bytes());
            return out;
        }
        _ => {}
    }
    for field in fields {
        if !rng.chance(70) {
            continue;
        }
        value(rng, &mut out, field.number, &field.shape, depth);
    }
    // `items` holds a schema or an array of them; Go's JSON decoding never
    // leaves one empty (`null` gives no items), and an empty one is `null` in
    // JSON, read back as no items, in Go as here. Give it a (blank) schema.
    if name == "JSONSchemaPropsOrArray" && out.is_empty() {
        delimited(&mut out, 1, &[]);
    }
    out
}

/// One field's value(s), keyed with `number`.
fn value(rng: &mut Rng, out: &mut Vec<u8>, number: u32, shape: &Shape, depth: usize) {
    match shape {
        Shape::Scalar(scalar) => scalar_value(rng, out, number, scalar),
        Shape::Message(name, fields) => {
            // Deep enough: leave nested messages out rather than grow without end.
            if depth < 8 {
                let bytes = message(rng, name, &fields(), depth + 1);
                delimited(out, number, &bytes);
            }
        }
        Shape::Repeated(inner) => {
            for _ in 0..rng.below(4) {
                value(rng, out, number, inner, depth);
            }
        }
        Shape::Map(k, v) => {
            for _ in 0..rng.below(4) {
                let mut entry = Vec::new();
                value(rng, &mut entry, 1, k, depth);
                value(rng, &mut entry, 2, v, depth);
                delimited(out, number, &entry);
            }
        }
    }
}

fn scalar_value(rng: &mut Rng, out: &mut Vec<u8>, number: u32, scalar: &str) {
    match scalar {
        "string" => delimited(out, number, rng.text().as_bytes()),
        "bytes" => {
            let bytes: Vec<u8> = (0..rng.below(12)).map(|_| rng.next() as u8).collect();
            delimited(out, number, &bytes);
        }
        "bool" => {
            key(out, number, 0);
            varint(out, rng.below(2) as u64);
        }
        "int32" => {
            key(out, number, 0);
            // Negative int32s are sign-extended to ten bytes, as Go writes them.
            varint(out, rng.int(32) as u64);
        }
        "int64" => {
            key(out, number, 0);
            varint(out, rng.int(64) as u64);
        }
        "double" => {
            key(out, number, 1);
            out.extend_from_slice(&(rng.below(1 << 20) as f64 / 8.0).to_le_bytes());
        }
        other => panic!("no generator for scalar type {other}: add one"),
    }
}
