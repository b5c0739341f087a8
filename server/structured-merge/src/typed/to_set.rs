//! `ToFieldSet` and `EnsureNamedFieldsAreMembers`.

use serde_json::Value;

use super::item_element;
use crate::path::{Path, PathElement};
use crate::schema::{DEDUCED, Relationship, Schema, TypeRef};
use crate::set::Set;

/// The field set of `value`: every scalar, every atomic list or map, every
/// list item (by key or value) and every map entry that is not a struct
/// field with content (struct fields are implied by their children).
pub fn field_set(schema: &Schema, ty: TypeRef, value: &Value) -> Set {
    let mut set = Set::new();
    walk(schema, ty, value, &mut Vec::new(), &mut set);
    set
}

fn walk(schema: &Schema, ty: TypeRef, value: &Value, path: &mut Path, set: &mut Set) {
    let atom = schema.resolve(ty).deduce(Some(value));
    if let Some((map, relationship)) = atom.map {
        if relationship == Relationship::Atomic {
            set.insert(path);
            return;
        }
        let Value::Object(entries) = value else {
            return;
        };
        for (key, child) in entries {
            let field = map.field(key);
            let child_ty = field.map(|f| f.ty).or(map.element).unwrap_or(DEDUCED);
            path.push(PathElement::Field(key.clone()));
            walk(schema, child_ty, child, path, set);
            let empty = match child {
                Value::Null => true,
                Value::Object(m) => m.is_empty(),
                _ => false,
            };
            if empty || field.is_none() {
                set.insert(path);
            }
            path.pop();
        }
    } else if atom.scalar.is_some() {
        set.insert(path);
    } else if let Some(list) = atom.list {
        if list.relationship == Relationship::Atomic {
            set.insert(path);
            return;
        }
        let Value::Array(items) = value else {
            return;
        };
        let elements: Vec<Option<PathElement>> = items
            .iter()
            .map(|item| item_element(schema, list, item).ok())
            .collect();
        // An item whose key repeats is owned as a whole, once.
        let mut seen: Vec<&PathElement> = Vec::with_capacity(elements.len());
        let mut duplicates: Vec<&PathElement> = Vec::new();
        for pe in elements.iter().flatten() {
            if seen.contains(&pe) {
                if !duplicates.contains(&pe) {
                    path.push(pe.clone());
                    set.insert(path);
                    path.pop();
                    duplicates.push(pe);
                }
            } else {
                seen.push(pe);
            }
        }
        for (item, pe) in items.iter().zip(&elements) {
            let Some(pe) = pe else { continue };
            if duplicates.contains(&pe) {
                continue;
            }
            path.push(pe.clone());
            walk(schema, list.element, item, path, set);
            set.insert(path);
            path.pop();
        }
    }
}

/// `set` with each struct field that has children also a member, at every
/// level.
pub fn named_fields_as_members(schema: &Schema, ty: TypeRef, set: &Set) -> Set {
    let resolved = schema.resolve(ty);
    let mut out = Set::new();
    for member in set.members() {
        out.insert(std::slice::from_ref(member));
    }
    for (pe, child) in set.children() {
        let child_ty = match pe {
            PathElement::Field(name) => match resolved.map {
                Some((map, _)) => {
                    if map.field(name).is_some() {
                        out.insert(std::slice::from_ref(pe));
                    }
                    map.type_of(name)
                }
                None => None,
            },
            PathElement::Key(_) => resolved.list.map(|l| l.element),
            _ => None,
        };
        let sub = match child_ty {
            Some(child_ty) => named_fields_as_members(schema, child_ty, child),
            // Upstream resolves an empty type reference here: no struct
            // below, so nothing is added.
            None => child.clone(),
        };
        *out.child_mut(pe) = sub;
    }
    out
}
