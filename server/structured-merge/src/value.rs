//! Order and equality of JSON values as structured-merge-diff defines them
//! (`value.Compare`, `value.Equals`): set members and list-map keys are
//! sorted by them, so the serialized field sets come out in upstream's order.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// A number as Go's unstructured JSON holds it: an integer when it has no
/// fraction (int64), else a float.
enum Num {
    Int(i128),
    Float(f64),
}

fn num(n: &Number) -> Num {
    if let Some(i) = n.as_i64() {
        Num::Int(i128::from(i))
    } else if let Some(u) = n.as_u64() {
        Num::Int(i128::from(u))
    } else {
        Num::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

fn float_compare(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// The rank of a value's type in the order: numbers, strings, booleans,
/// lists, maps, null.
fn rank(v: &Value) -> u8 {
    match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        Value::Array(_) => 3,
        Value::Object(_) => 4,
        Value::Null => 5,
    }
}

/// `value.Compare`: floats and integers compare numerically; otherwise by
/// type rank, then by content (lists item by item, maps key by key in
/// lexical order).
pub fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (num(x), num(y)) {
            (Num::Int(x), Num::Int(y)) => x.cmp(&y),
            (Num::Int(x), Num::Float(y)) => float_compare(x as f64, y),
            (Num::Float(x), Num::Int(y)) => float_compare(x, y as f64),
            (Num::Float(x), Num::Float(y)) => float_compare(x, y),
        },
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (l, r) in x.iter().zip(y) {
                let c = compare(l, r);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            if x.is_empty() && y.is_empty() {
                return Ordering::Equal;
            }
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            // Walk the union of keys in order: the side missing a key the
            // other has first is the greater (Go's MapCompare).
            for key in keys {
                let c = match (x.get(key), y.get(key)) {
                    (Some(l), Some(r)) => compare(l, r),
                    (None, _) => Ordering::Greater,
                    (_, None) => Ordering::Less,
                };
                if c != Ordering::Equal {
                    return c;
                }
            }
            Ordering::Equal
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

/// `value.Equals`: deep equality with numbers compared numerically.
pub fn equals(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => compare(a, b) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(l, r)| equals(l, r))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, l)| y.get(k).is_some_and(|r| equals(l, r)))
        }
        _ => a == b,
    }
}

/// `value.ToString`, as conflict paths print values: strings quoted as Go's
/// `%q` quotes them, numbers and booleans plain.
pub fn to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::String(s) => go_quote(s),
        Value::Number(n) => match num(n) {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => format_go_float(f),
        },
        Value::Bool(b) => b.to_string(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(to_string).collect();
            format!("[{}]", items.join(","))
        }
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", to_string(v)))
            .collect(),
    }
}

/// Go's `%v` of a float64: the shortest representation, exponent form for
/// large and small magnitudes.
fn format_go_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-4..1e21).contains(&abs) {
        let s = format!("{f:e}");
        // Rust writes 1e21, Go 1e+21.
        match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e:0>2}"),
            Some((m, e)) => format!("{m}e-{:0>2}", &e[1..]),
            None => s,
        }
    } else {
        format!("{f}")
    }
}

/// Go's `%q` of a string: double-quoted with Go escapes.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\x0b' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Writes `s` as a JSON string the way Go's encoding/json does: besides
/// the usual escapes, `<`, `>`, `&`, U+2028 and U+2029 become `\u` escapes.
pub fn write_go_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Which Go writer a text must match: the two write floats below 1e-6
/// differently (encoding/json `1e-7`, jsoniter `1e-07`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum GoWriter {
    EncodingJson,
    Jsoniter,
}

/// Writes a JSON value as Go's encoding/json writes the unstructured form
/// (keys sorted, Go's string escapes, float64s in Go's form).
pub fn write_go_json(out: &mut String, v: &Value) {
    write_json(out, v, GoWriter::EncodingJson);
}

/// Writes a JSON value as jsoniter (structured-merge-diff's writer of the
/// keys and values in FieldsV1) writes it.
pub(crate) fn write_jsoniter_json(out: &mut String, v: &Value) {
    write_json(out, v, GoWriter::Jsoniter);
}

fn write_json(out: &mut String, v: &Value, writer: GoWriter) {
    match v {
        Value::String(s) => write_go_json_string(out, s),
        Value::Number(n) => write_go_number(out, n, writer),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item, writer);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json_string(out, key);
                out.push(':');
                write_json(out, &map[key], writer);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A number as Go writes an int64 or a float64: a float in the shortest
/// form that reads back (`strconv.AppendFloat(f, fmt, -1, 64)`), `'f'`
/// from 1e-6 to 1e21 (so 2.0 is `2`, where serde writes `2.0`), `'e'`
/// outside (`1e+21`, `1.5e-07`; encoding/json then trims the exponent's
/// leading zero: `1.5e-7`).
fn write_go_number(out: &mut String, n: &Number, writer: GoWriter) {
    let f = match n.as_f64() {
        Some(f) if n.is_f64() => f,
        _ => {
            out.push_str(&n.to_string());
            return;
        }
    };
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        // Rust's Display is the shortest round-trip form, never exponent.
        out.push_str(&format!("{f}"));
        return;
    }
    let text = format!("{f:e}");
    let Some((mantissa, exponent)) = text.split_once('e') else {
        out.push_str(&text);
        return;
    };
    out.push_str(mantissa);
    out.push('e');
    match exponent.strip_prefix('-') {
        Some(digits) if digits.len() < 2 && writer == GoWriter::Jsoniter => {
            out.push_str("-0");
            out.push_str(digits);
        }
        Some(digits) => {
            out.push('-');
            out.push_str(digits);
        }
        None => {
            out.push('+');
            out.push_str(exponent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_before_strings_before_booleans() {
        let mut values = vec![
            json!(null),
            json!({}),
            json!([]),
            json!(true),
            json!("a"),
            json!(1.5),
            json!(1),
        ];
        values.sort_by(compare);
        assert_eq!(
            values,
            vec![
                json!(1),
                json!(1.5),
                json!("a"),
                json!(true),
                json!([]),
                json!({}),
                json!(null)
            ]
        );
    }

    #[test]
    fn ints_and_floats_compare_numerically() {
        assert_eq!(compare(&json!(2), &json!(2.0)), Ordering::Equal);
        assert!(equals(&json!(2), &json!(2.0)));
        assert_eq!(compare(&json!(3), &json!(2.5)), Ordering::Greater);
    }

    #[test]
    fn floats_as_go_writes_them() {
        let written = |v: Value, writer| {
            let mut out = String::new();
            write_json(&mut out, &v, writer);
            out
        };
        for (v, encoding_json, jsoniter) in [
            (json!(2.0), "2", "2"),
            (json!(-0.5), "-0.5", "-0.5"),
            (
                json!(1e20),
                "100000000000000000000",
                "100000000000000000000",
            ),
            (json!(1e21), "1e+21", "1e+21"),
            (json!(1.5e-7), "1.5e-7", "1.5e-07"),
            (json!(1e-10), "1e-10", "1e-10"),
            (json!(7), "7", "7"),
        ] {
            assert_eq!(written(v.clone(), GoWriter::EncodingJson), encoding_json);
            assert_eq!(written(v, GoWriter::Jsoniter), jsoniter);
        }
    }

    #[test]
    fn go_escapes_html_characters() {
        let mut out = String::new();
        write_go_json_string(&mut out, "a<b>&\"c\"");
        assert_eq!(out, r#""a\u003cb\u003e\u0026\"c\"""#);
    }
}
