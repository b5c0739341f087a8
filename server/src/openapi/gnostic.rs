//! `/openapi/v2` in protobuf: gnostic's `openapi.v2.Document` message
//! (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`), which
//! client-go's `OpenAPISchema()` always asks for and decodes. kubectl 1.27 and
//! 1.28 validate manifests against it before sending them.
//!
//! Written from the JSON document: the definitions in full (types, formats,
//! references, properties, items, maps, `allOf`, required, descriptions and the
//! `x-kubernetes-*` extensions, whose values gnostic carries as YAML text), the
//! info block, and no paths (clients read the schemas; routes come from
//! discovery).

use kapi_runtime::proto::wire::put_bytes;
use serde_json::Value;

/// The media type clients ask for.
pub const MEDIA_TYPE: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// The `Content-Type` of the answer: kube-apiserver writes `.` where the request
/// had `@`, which Go's MIME parser would refuse.
pub const CONTENT_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// Encodes a Swagger 2.0 JSON document as an `openapi.v2.Document`.
pub fn document(doc: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    string(&mut out, 1, doc.get("swagger"));
    if let Some(info) = doc.get("info") {
        let mut message = Vec::new();
        string(&mut message, 1, info.get("title"));
        string(&mut message, 2, info.get("version"));
        put_bytes(&mut out, 2, &message);
    }
    if let Some(Value::Object(definitions)) = doc.get("definitions") {
        let mut message = Vec::new();
        for (name, schema) in definitions {
            put_bytes(&mut message, 1, &named_schema(name, schema));
        }
        put_bytes(&mut out, 9, &message);
    }
    out
}

fn string(out: &mut Vec<u8>, number: u32, value: Option<&Value>) {
    if let Some(Value::String(s)) = value
        && !s.is_empty()
    {
        put_bytes(out, number, s.as_bytes());
    }
}

fn named_schema(name: &str, schema: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    put_bytes(&mut out, 1, name.as_bytes());
    put_bytes(&mut out, 2, &self::schema(schema));
    out
}

/// `openapi.v2.Schema`.
fn schema(schema: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let Value::Object(map) = schema else {
        return out;
    };
    string(&mut out, 1, map.get("$ref"));
    string(&mut out, 2, map.get("format"));
    string(&mut out, 4, map.get("description"));
    if let Some(Value::Array(required)) = map.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            put_bytes(&mut out, 19, name.as_bytes());
        }
    }
    match map.get("additionalProperties") {
        Some(Value::Bool(b)) => put_bytes(&mut out, 21, &[0x10, u8::from(*b)]),
        Some(inner @ Value::Object(_)) => {
            let mut item = Vec::new();
            put_bytes(&mut item, 1, &self::schema(inner));
            put_bytes(&mut out, 21, &item);
        }
        _ => {}
    }
    if let Some(Value::String(t)) = map.get("type") {
        let mut item = Vec::new();
        put_bytes(&mut item, 1, t.as_bytes());
        put_bytes(&mut out, 22, &item);
    }
    if let Some(items) = map.get("items") {
        let mut item = Vec::new();
        put_bytes(&mut item, 1, &self::schema(items));
        put_bytes(&mut out, 23, &item);
    }
    if let Some(Value::Array(all_of)) = map.get("allOf") {
        for inner in all_of {
            put_bytes(&mut out, 24, &self::schema(inner));
        }
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        let mut message = Vec::new();
        for (name, inner) in properties {
            put_bytes(&mut message, 1, &named_schema(name, inner));
        }
        put_bytes(&mut out, 25, &message);
    }
    for (key, value) in map.iter().filter(|(k, _)| k.starts_with("x-")) {
        put_bytes(&mut out, 31, &named_any(key, value));
    }
    out
}

/// `openapi.v2.NamedAny` with the value as YAML, as gnostic carries extensions.
fn named_any(name: &str, value: &Value) -> Vec<u8> {
    let yaml = serde_saphyr::to_string(value).unwrap_or_default();
    let mut any = Vec::new();
    put_bytes(&mut any, 2, yaml.as_bytes());
    let mut out = Vec::new();
    put_bytes(&mut out, 1, name.as_bytes());
    put_bytes(&mut out, 2, &any);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn schemas_carry_types_refs_properties_and_extensions() {
        let doc = json!({
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": "v1"},
            "definitions": {"a.B": {"type": "object", "required": ["x"],
                "properties": {"x": {"type": "string"}, "y": {"$ref": "#/definitions/a.C"}},
                "x-kubernetes-group-version-kind": [{"group": "", "kind": "B", "version": "v1"}]}}
        });
        let bytes = document(&doc);
        // swagger, then info, then the definitions.
        assert_eq!(&bytes[..5], b"\x0a\x032.0");
        let text = String::from_utf8_lossy(&bytes);
        for expected in [
            "Kubernetes",
            "a.B",
            "#/definitions/a.C",
            "x-kubernetes-group-version-kind",
            "kind: B",
        ] {
            assert!(text.contains(expected), "{expected} in {text}");
        }
    }
}
