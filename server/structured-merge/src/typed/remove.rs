//! `RemoveItems`: a value without the paths of a set.

use serde_json::{Map, Value};

use super::item_element;
use crate::path::PathElement;
use crate::schema::{DEDUCED, Relationship, Schema, TypeRef};
use crate::set::Set;

/// `value` without the paths of `set`. A node emptied by the removal
/// becomes null, as upstream leaves it.
pub fn remove(schema: &Schema, ty: TypeRef, value: &Value, set: &Set) -> Value {
    let atom = schema.resolve(ty).deduce(Some(value));
    if let Some((map, relationship)) = atom.map {
        let Value::Object(entries) = value else {
            return Value::Null;
        };
        if entries.is_empty() || relationship == Relationship::Atomic {
            return Value::Null;
        }
        let mut out = Map::new();
        for (key, child) in entries {
            let pe = PathElement::Field(key.clone());
            if set.has_member(&pe) {
                continue;
            }
            let child = match set.with_prefix(&pe).filter(|s| !s.is_empty()) {
                Some(below) => {
                    let child_ty = map.type_of(key).unwrap_or(DEDUCED);
                    remove(schema, child_ty, child, below)
                }
                None => child.clone(),
            };
            out.insert(key.clone(), child);
        }
        if out.is_empty() {
            Value::Null
        } else {
            Value::Object(out)
        }
    } else if atom.scalar.is_some() {
        value.clone()
    } else if let Some(list) = atom.list {
        let Value::Array(items) = value else {
            return Value::Null;
        };
        if items.is_empty() || list.relationship == Relationship::Atomic {
            return Value::Null;
        }
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let Ok(pe) = item_element(schema, list, item) else {
                out.push(item.clone());
                continue;
            };
            if set.has_member(&pe) {
                continue;
            }
            match set.with_prefix(&pe).filter(|s| !s.is_empty()) {
                Some(below) => out.push(remove(schema, list.element, item, below)),
                None => out.push(item.clone()),
            }
        }
        if out.is_empty() {
            Value::Null
        } else {
            Value::Array(out)
        }
    } else {
        Value::Null
    }
}
