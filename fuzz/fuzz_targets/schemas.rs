//! Custom resource schemas and their CEL rules, as a CustomResourceDefinition
//! gives them and a custom object meets them: the structural schema is
//! built, its `x-kubernetes-validations` compiled, and an object defaulted,
//! pruned and validated (schema, then rules, on a create and on an update,
//! ratcheted too), on the stack the server gives CEL. Nothing may panic, and
//! evaluation stays within the cost budget (a rule that ran away would show
//! as a timeout).
//!
//! The first byte picks what the rest is: even, a rule (its first line; a
//! second line, if any, its message expression) over a fixed schema, then a
//! JSON object as `spec`; odd, a JSON schema (`openAPIV3Schema`) that a fixed
//! object meets.

#![no_main]

use kapi_runtime::validation::FieldErrors;
use kapi_server::custom::cel::{EVAL_STACK, Mode, with_stack};
use kapi_server::custom::schema::Structural;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};

/// The spec every rule of the even mode is a rule of.
fn spec_schema(rule: &str, message: Option<&str>) -> Value {
    let mut validation = json!({ "rule": rule });
    if let Some(message) = message {
        validation["messageExpression"] = json!(message);
    }
    json!({"type": "object", "properties": {
        "replicas": {"type": "integer", "minimum": 0, "default": 1},
        "name": {"type": "string", "maxLength": 63},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8,
            "x-kubernetes-list-type": "set"},
        "ports": {"type": "array", "maxItems": 4, "items": {"type": "object",
            "required": ["port"], "properties": {"port": {"type": "integer"},
                "name": {"type": "string"}}},
            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"]},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "size": {"x-kubernetes-int-or-string": true},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
        "x-kubernetes-validations": [validation]})
}

/// Defaults, prunes and validates `object` against `schema` as a create,
/// then as an update from `old`.
fn exercise(schema: &Structural, object: Value, old: &Value) {
    let Value::Object(mut content) = object else {
        return;
    };
    schema.default_root(&mut content);
    let mut unknown = Vec::new();
    schema.prune_root(&mut content, &mut unknown);
    let mut errs = FieldErrors::default();
    schema.validate_root(&content, None, &mut errs);
    let new = Value::Object(content.clone());
    with_stack(EVAL_STACK, || {
        let mut errs = FieldErrors::default();
        schema.validate_rules_root(&new, None, Mode::Decide, &mut errs);
        let mut errs = FieldErrors::default();
        schema.validate_rules_root(&new, Some(old), Mode::Decide, &mut errs);
        let mut errs = FieldErrors::default();
        schema.validate_rules_root(&new, Some(old), Mode::Ratcheted, &mut errs);
    });
    let old_content = old.as_object().cloned().unwrap_or_default();
    let mut errs = FieldErrors::default();
    schema.validate_root(&content, Some(&old_content), &mut errs);
}

/// A custom object around `spec`.
fn object(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"}, "spec": spec})
}

fuzz_target!(|data: &[u8]| {
    let Some((mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let old = object(json!({"replicas": 2, "name": "old", "tags": ["a"],
        "ports": [{"port": 80}], "labels": {"x": "y"}, "size": "10%"}));
    if mode % 2 == 0 {
        let (rules, body) = text.split_once("\n\n").unwrap_or((text, ""));
        let mut lines = rules.splitn(2, '\n');
        let rule = lines.next().unwrap_or_default();
        let message = lines.next();
        let root = json!({"type": "object",
            "properties": {"spec": spec_schema(rule, message)}});
        let schema = Structural::of(&root);
        let spec = serde_json::from_str::<Value>(body)
            .unwrap_or_else(|_| json!({"replicas": 3, "name": body, "tags": ["a", "b"]}));
        exercise(&schema, object(spec), &old);
    } else {
        let Ok(root @ Value::Object(_)) = serde_json::from_str::<Value>(text) else {
            return;
        };
        let schema = Structural::of(&root);
        let mut spec = Map::new();
        spec.insert("replicas".to_owned(), json!(3));
        spec.insert("name".to_owned(), json!("new"));
        exercise(&schema, object(Value::Object(spec)), &old);
        exercise(&schema, old.clone(), &old);
    }
});
