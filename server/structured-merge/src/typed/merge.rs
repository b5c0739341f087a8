//! `Merge`: a configuration merged into a live object. Scalars and atomic
//! nodes take the configuration's value; maps merge key by key; lists
//! merge item by item (by key or value), keeping the live order and placing
//! new items as upstream places them.

use serde_json::{Map, Value};

use super::{as_list, as_map, item_element};
use crate::path::PathElement;
use crate::schema::{DEDUCED, List, MapType, Relationship, Schema, TypeRef};

/// `rhs` merged into `lhs`.
pub fn merge(schema: &Schema, ty: TypeRef, lhs: &Value, rhs: &Value) -> Result<Value, String> {
    let mut errors = Vec::new();
    let out = node(schema, ty, Some(lhs), Some(rhs), &mut errors);
    if let Some(first) = errors.into_iter().next() {
        return Err(first);
    }
    Ok(out.unwrap_or(Value::Null))
}

fn node(
    schema: &Schema,
    ty: TypeRef,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    errors: &mut Vec<String>,
) -> Option<Value> {
    let atom = schema.resolve(ty);
    // The configuration's reading decides (the live one is read first
    // upstream, for its errors only).
    let atom = if rhs.is_none() {
        atom.deduce(lhs)
    } else {
        atom.deduce(rhs)
    };
    if let Some((map, relationship)) = atom.map {
        merge_map(schema, map, relationship, lhs, rhs, errors)
    } else if atom.scalar.is_some() {
        keep_rhs(lhs, rhs)
    } else if let Some(list) = atom.list {
        merge_list(schema, list, lhs, rhs, errors)
    } else {
        None
    }
}

fn keep_rhs(lhs: Option<&Value>, rhs: Option<&Value>) -> Option<Value> {
    rhs.or(lhs).cloned()
}

fn merge_map(
    schema: &Schema,
    map: &MapType,
    relationship: Relationship,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    errors: &mut Vec<String>,
) -> Option<Value> {
    let (l, r) = (as_map(lhs), as_map(rhs));
    let empty = l.is_none_or(|m| m.is_empty()) && r.is_none_or(|m| m.is_empty());
    if relationship == Relationship::Atomic || empty {
        return keep_rhs(lhs, rhs);
    }
    if l.is_none() && r.is_none() {
        return None;
    }
    let child_ty = |key: &str| map.type_of(key).unwrap_or(DEDUCED);
    let mut out = Map::new();
    for (key, lv) in l.into_iter().flatten() {
        let rv = r.and_then(|r| r.get(key));
        if let Some(v) = node(schema, child_ty(key), Some(lv), rv, errors) {
            out.insert(key.clone(), v);
        }
    }
    for (key, rv) in r.into_iter().flatten() {
        if l.is_some_and(|l| l.contains_key(key)) {
            continue;
        }
        if let Some(v) = node(schema, child_ty(key), None, Some(rv), errors) {
            out.insert(key.clone(), v);
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// The items of a list with their path elements, checked for duplicates
/// where they are not allowed (the configuration).
fn indexed<'v>(
    schema: &Schema,
    list: &List,
    items: Option<&'v Vec<Value>>,
    allow_duplicates: bool,
    errors: &mut Vec<String>,
) -> Vec<(PathElement, &'v Value)> {
    let mut out: Vec<(PathElement, &Value)> = Vec::new();
    for (i, item) in items.into_iter().flatten().enumerate() {
        match item_element(schema, list, item) {
            Err(e) => errors.push(format!("element {i}: {e}")),
            Ok(pe) => {
                if !allow_duplicates && out.iter().any(|(p, _)| *p == pe) {
                    errors.push(format!("duplicate entries for key {pe}"));
                    continue;
                }
                out.push((pe, item));
            }
        }
    }
    out
}

fn merge_list(
    schema: &Schema,
    list: &List,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    errors: &mut Vec<String>,
) -> Option<Value> {
    let (l, r) = (as_list(lhs), as_list(rhs));
    let empty = l.is_none_or(|i| i.is_empty()) && r.is_none_or(|i| i.is_empty());
    if list.relationship == Relationship::Atomic || empty {
        return keep_rhs(lhs, rhs);
    }
    if l.is_none() && r.is_none() {
        return None;
    }
    let mut local = Vec::new();
    let rhs_items = indexed(schema, list, r, false, &mut local);
    let lhs_items = indexed(schema, list, l, true, &mut local);
    if !local.is_empty() {
        errors.extend(local);
        return None;
    }
    // A live item whose key repeats reads as null (upstream's index keeps
    // a null for it).
    let live = |pe: &PathElement| -> Option<&Value> {
        let mut found = lhs_items.iter().filter(|(p, _)| p == pe);
        let first = found.next()?;
        Some(if found.next().is_some() {
            &Value::Null
        } else {
            first.1
        })
    };
    let config = |pe: &PathElement| rhs_items.iter().find(|(p, _)| p == pe).map(|(_, v)| *v);
    // Items both sides have, in the configuration's order.
    let mut shared = rhs_items
        .iter()
        .map(|(pe, _)| pe)
        .filter(|pe| live(pe).is_some());
    let mut next_shared = shared.next();
    let mut merged: Vec<&PathElement> = Vec::new();
    let mut out = Vec::with_capacity(lhs_items.len().max(rhs_items.len()));
    let mut item = |lv: Option<&Value>, rv: Option<&Value>, out: &mut Vec<Value>| {
        if let Some(v) = node(schema, list.element, lv, rv, errors) {
            out.push(v);
        }
    };
    let (mut li, mut ri) = (0, 0);
    while li < lhs_items.len() || ri < rhs_items.len() {
        if li < lhs_items.len() && ri < rhs_items.len() {
            let pe = &lhs_items[li].0;
            if *pe == rhs_items[ri].0 {
                merged.push(pe);
                item(live(pe), config(pe), &mut out);
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            if config(pe).is_some() && next_shared.is_some_and(|n| n != pe) {
                // A live item the configuration moves later: it comes
                // with the configuration's items.
                li += 1;
                continue;
            }
        }
        if li < lhs_items.len() {
            let pe = &lhs_items[li].0;
            if config(pe).is_none() {
                item(Some(lhs_items[li].1), None, &mut out);
                li += 1;
                continue;
            } else if merged.contains(&pe) {
                li += 1;
            }
        }
        if ri < rhs_items.len() {
            let pe = &rhs_items[ri].0;
            merged.push(pe);
            item(live(pe), config(pe), &mut out);
            ri += 1;
            if next_shared.is_some_and(|n| n == pe) {
                next_shared = shared.next();
            }
        }
    }
    (!out.is_empty()).then_some(Value::Array(out))
}
