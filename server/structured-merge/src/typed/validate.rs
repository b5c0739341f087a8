//! The checks upstream makes when it reads an applied configuration with
//! its schema (`TypedValue` validation), in its words.

use serde_json::Value;

use super::item_element;
use crate::path::{Path, PathElement, path_string};
use crate::schema::{Relationship, Scalar, Schema, TypeRef};

/// Every problem of `value` under `ty`, each prefixed by its path.
pub fn validate(schema: &Schema, ty: TypeRef, value: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    walk(schema, ty, value, &mut Vec::new(), &mut errors);
    errors
}

fn error(path: &Path, message: String) -> String {
    if path.is_empty() {
        message
    } else {
        format!("{}: {message}", path_string(path))
    }
}

fn walk(schema: &Schema, ty: TypeRef, value: &Value, path: &mut Path, errors: &mut Vec<String>) {
    let atom = schema.resolve(ty).deduce(Some(value));
    if let Some((map, _)) = atom.map {
        let entries = match value {
            Value::Object(entries) => entries,
            Value::Null => return,
            other => {
                errors.push(error(
                    path,
                    format!("expected map, got {}", go_value(other)),
                ));
                return;
            }
        };
        for (key, child) in entries {
            path.push(PathElement::Field(key.clone()));
            match map.type_of(key) {
                Some(child_ty) => walk(schema, child_ty, child, path, errors),
                None => errors.push(error(path, "field not declared in schema".into())),
            }
            path.pop();
        }
    } else if let Some(scalar) = atom.scalar {
        let fits = match (scalar, value) {
            (_, Value::Null) => true,
            (Scalar::Numeric, Value::Number(_)) => true,
            (Scalar::String, Value::String(_)) => true,
            (Scalar::Boolean, Value::Bool(_)) => true,
            (Scalar::Untyped, Value::Number(_) | Value::String(_) | Value::Bool(_)) => true,
            _ => false,
        };
        if !fits {
            let message = match scalar {
                Scalar::Numeric => {
                    format!("expected numeric (int or float), got {}", go_type(value))
                }
                Scalar::String => format!("expected string, got {}", go_value(value)),
                Scalar::Boolean => format!("expected boolean, got {}", go_value(value)),
                Scalar::Untyped => format!("expected any scalar, got {}", go_value(value)),
            };
            errors.push(error(path, message));
        }
    } else if let Some(list) = atom.list {
        let items = match value {
            Value::Array(items) => items,
            Value::Null => return,
            other => {
                errors.push(error(
                    path,
                    format!("expected list, got {}", go_value(other)),
                ));
                return;
            }
        };
        if list.relationship == Relationship::Atomic {
            for item in items {
                walk(schema, list.element, item, path, errors);
            }
            return;
        }
        let mut seen: Vec<PathElement> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match item_element(schema, list, item) {
                Err(e) => errors.push(error(path, format!("element {i}: {e}"))),
                Ok(pe) if seen.contains(&pe) => {
                    errors.push(error(path, format!("duplicate entries for key {pe}")));
                }
                Ok(pe) => {
                    path.push(pe.clone());
                    walk(schema, list.element, item, path, errors);
                    path.pop();
                    seen.push(pe);
                }
            }
        }
    }
}

/// Go's `%T` of an unstructured value.
fn go_type(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
        Value::Null => "<nil>",
    }
}

/// A value as upstream's messages print it: Go's `%#v` of its
/// unstructured value wrapper.
fn go_value(value: &Value) -> String {
    let inner = match value {
        Value::String(s) => crate::value::go_quote(s),
        Value::Array(_) => format!("[]interface {{}}{value}"),
        Value::Object(_) => format!("map[string]interface {{}}{value}"),
        other => other.to_string(),
    };
    format!("&value.valueUnstructured{{Value:{inner}}}")
}
