//! Strategic merge patch (`application/strategic-merge-patch+json`), as
//! k8s.io/apimachinery's strategicpatch applies it: a merge patch whose lists
//! merge the way each field declares (`x-kubernetes-patch-strategy` and
//! `x-kubernetes-patch-merge-key` in the kind's OpenAPI schema, which the
//! derives write from the structs' annotations):
//!
//! - a map merges key by key; `null` deletes a key;
//! - a list with strategy `merge` and a merge key merges element by element
//!   (containers by `name`, ports by `containerPort`...); without a merge key
//!   its primitive values are united; any other list is replaced;
//! - directives: `$patch: replace | delete | merge` on a map or a list
//!   element, `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>`
//!   and `$retainKeys`.
//!
//! The schema is walked alongside the document; a field the schema does not
//! know merges as in a JSON merge patch.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";

/// The definitions a kind's schema refers to, by name.
pub type Definitions = BTreeMap<String, Value>;

/// A place in the schema: the schema of the value there, references followed.
#[derive(Clone, Copy)]
struct Node<'a> {
    defs: &'a Definitions,
    schema: Option<&'a Value>,
}

/// How a field's list merges.
#[derive(Clone, Copy, Default)]
struct FieldMeta<'a> {
    merge: bool,
    replace: bool,
    merge_key: Option<&'a str>,
}

impl<'a> Node<'a> {
    fn new(defs: &'a Definitions, schema: Option<&'a Value>) -> Node<'a> {
        Node {
            defs,
            schema: schema.map(|s| resolve(defs, s)),
        }
    }

    /// The schema of property `name`, and its patch strategy.
    fn field(&self, name: &str) -> (Node<'a>, FieldMeta<'a>) {
        let property = self
            .schema
            .and_then(|s| s.get("properties"))
            .and_then(|p| p.get(name))
            .or_else(|| self.schema.and_then(|s| s.get("additionalProperties")));
        let Some(property) = property else {
            return (Node::new(self.defs, None), FieldMeta::default());
        };
        let strategy = property["x-kubernetes-patch-strategy"]
            .as_str()
            .unwrap_or_default();
        let meta = FieldMeta {
            merge: strategy.split(',').any(|s| s == "merge"),
            replace: strategy.split(',').any(|s| s == "replace"),
            merge_key: property["x-kubernetes-patch-merge-key"].as_str(),
        };
        (Node::new(self.defs, Some(property)), meta)
    }

    /// The schema of a list's elements.
    fn items(&self) -> Node<'a> {
        Node::new(self.defs, self.schema.and_then(|s| s.get("items")))
    }
}

/// A `$ref` followed to its definition (one level at a time, to the end).
fn resolve<'a>(defs: &'a Definitions, schema: &'a Value) -> &'a Value {
    let mut schema = schema;
    for _ in 0..16 {
        let Some(name) = schema["$ref"]
            .as_str()
            .and_then(|r| r.strip_prefix("#/definitions/"))
        else {
            break;
        };
        match defs.get(name) {
            Some(next) => schema = next,
            None => break,
        }
    }
    schema
}

/// A kind's schema as a strategic merge patch follows it.
#[derive(Debug)]
pub struct PatchSchema {
    defs: Definitions,
    root: Value,
}

impl PatchSchema {
    /// The schema a type's OpenAPI function describes.
    pub fn of(
        schema: impl FnOnce(&mut kapi_runtime::openapi::Definitions) -> Value,
    ) -> PatchSchema {
        let mut defs = kapi_runtime::openapi::Definitions::new();
        let root = schema(&mut defs);
        PatchSchema {
            defs: defs.into_inner(),
            root,
        }
    }

    /// The strategic merge patch that turns `original` into `modified` (Go's
    /// `CreateTwoWayMergePatch`): changed fields, `null` for removed ones,
    /// list elements by merge key with `$patch: delete` for removed ones,
    /// `$deleteFromPrimitiveList` and `$setElementOrder` for merged lists.
    pub fn diff(&self, original: &Value, modified: &Value) -> Value {
        let node = Node::new(&self.defs, Some(&self.root));
        match (original, modified) {
            (Value::Object(o), Value::Object(m)) => Value::Object(diff_map(o, m, node)),
            _ => modified.clone(),
        }
    }

    /// Applies `patch` to `doc`.
    pub fn apply(&self, doc: &mut Value, patch: &Value) -> Result<(), PatchError> {
        if !patch.is_object() {
            return Err(PatchError::NotAnObject(json_kind(patch)));
        }
        apply(doc, patch, &self.defs, &self.root).map_err(PatchError::Invalid)
    }
}

/// Why a strategic merge patch could not be applied.
#[derive(Debug, PartialEq, Eq)]
pub enum PatchError {
    /// The patch is no JSON object (it is the named JSON kind): the body is
    /// malformed, a 400 upstream.
    NotAnObject(&'static str),
    /// The patch breaks a merge rule (a missing merge key, an unknown
    /// directive), with upstream's message: a 500 upstream.
    Invalid(String),
}

/// The JSON kind of a value, as Go's decoder names it.
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null | Value::Object(_) => "object",
    }
}

/// Applies `patch` to `doc`, whose schema is `root` (usually a `$ref` to the
/// kind's definition) in `defs`.
pub fn apply(
    doc: &mut Value,
    patch: &Value,
    defs: &Definitions,
    root: &Value,
) -> Result<(), String> {
    let Value::Object(patch) = patch else {
        return Err("a strategic merge patch must be a JSON object".into());
    };
    let node = Node::new(defs, Some(root));
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let Value::Object(original) = doc else {
        return Ok(());
    };
    match merge_map(std::mem::take(original), patch, node)? {
        Some(merged) => *original = merged,
        None => *original = Map::new(),
    }
    Ok(())
}

/// Merges `patch` into `original`; `None` when the patch deletes the map.
fn merge_map(
    mut original: Map<String, Value>,
    patch: &Map<String, Value>,
    node: Node<'_>,
) -> Result<Option<Map<String, Value>>, String> {
    match patch.get(PATCH).map(|v| v.as_str()) {
        None | Some(Some("merge")) => {}
        Some(Some("replace")) => return Ok(Some(clean_map(patch, node)?)),
        Some(Some("delete")) => return Ok(None),
        Some(other) => {
            return Err(format!(
                "unknown patch type: {} in map: {}",
                display(other),
                go_text(&Value::Object(patch.clone()))
            ));
        }
    }
    if let Some(retain) = patch.get(RETAIN_KEYS) {
        let Value::Array(keys) = retain else {
            return Err("$retainKeys must be a list of field names".into());
        };
        // Where the directive appears (patches put it where a field declares
        // retainKeys), the fields it does not list are cleared; the patch may
        // only set listed ones.
        let keep: Vec<&str> = keys.iter().filter_map(Value::as_str).collect();
        for key in patch.keys().filter(|k| !k.starts_with('$')) {
            if !keep.contains(&key.as_str()) {
                return Err(format!(
                    "the field {key:?} of the patch is not listed in $retainKeys"
                ));
            }
        }
        original.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (key, values) in patch {
        let Some(field) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) else {
            continue;
        };
        let Value::Array(remove) = values else {
            return Err(format!("{key} must be a list"));
        };
        if let Some(Value::Array(list)) = original.get_mut(field) {
            list.retain(|v| !remove.contains(v));
        }
    }
    for (key, value) in patch {
        if key.starts_with('$') {
            continue;
        }
        let (child, child_meta) = node.field(key);
        if value.is_null() {
            original.shift_remove(key);
            continue;
        }
        let order = patch.get(&format!("{SET_ELEMENT_ORDER}{key}"));
        // Taken out in place (the key keeps its position), put back merged.
        let current = original.get_mut(key).map(std::mem::take);
        let merged = match (current, value) {
            (Some(Value::Object(old)), Value::Object(p)) if !child_meta.replace => {
                merge_map(old, p, child)?.map(Value::Object)
            }
            (Some(Value::Array(old)), Value::Array(p)) if child_meta.merge => {
                Some(Value::Array(merge_list(old, p, child, child_meta, order)?))
            }
            (None, Value::Array(p)) if child_meta.merge => Some(Value::Array(merge_list(
                Vec::new(),
                p,
                child,
                child_meta,
                order,
            )?)),
            (_, value) => Some(clean(value, child)?),
        };
        match merged {
            Some(merged) => {
                original.insert(key.clone(), merged);
            }
            None => {
                original.shift_remove(key);
            }
        }
    }
    // A list that only had its order set (or its items deleted by value).
    for (key, order) in patch {
        let Some(field) = key.strip_prefix(SET_ELEMENT_ORDER) else {
            continue;
        };
        if patch.contains_key(field) {
            continue;
        }
        let (child, child_meta) = node.field(field);
        if let Some(slot) = original.get_mut(field)
            && let Value::Array(list) = std::mem::take(slot)
        {
            *slot = Value::Array(merge_list(list, &[], child, child_meta, Some(order))?);
        }
    }
    Ok(Some(original))
}

/// Merges a list with strategy `merge`: by merge key for maps, as a set for
/// primitives; then orders it as `$setElementOrder` says.
fn merge_list(
    original: Vec<Value>,
    patch: &[Value],
    node: Node<'_>,
    meta: FieldMeta<'_>,
    order: Option<&Value>,
) -> Result<Vec<Value>, String> {
    let items = node.items();
    if patch
        .iter()
        .any(|p| p.get(PATCH).and_then(Value::as_str) == Some("replace"))
    {
        let rest: Vec<&Value> = patch
            .iter()
            .filter(|p| p.get(PATCH).and_then(Value::as_str) != Some("replace"))
            .collect();
        return rest.into_iter().map(|v| clean(v, items)).collect();
    }
    let original_len = original.len();
    let mut merged: Vec<(Option<usize>, Value)> = original
        .into_iter()
        .enumerate()
        .map(|(i, v)| (Some(i), v))
        .collect();
    let primitive =
        patch.iter().all(|p| !p.is_object()) && merged.iter().all(|(_, v)| !v.is_object());
    match meta.merge_key {
        _ if primitive => {
            for value in patch {
                if value.is_array() {
                    return Err("lists of lists cannot be merged".into());
                }
                if !merged.iter().any(|(_, v)| v == value) {
                    merged.push((None, value.clone()));
                }
            }
        }
        None => {
            return Err("a list of maps with strategy merge needs a merge key".into());
        }
        Some(key) => {
            for item in patch {
                let Value::Object(item) = item else {
                    return Err(format!(
                        "the elements of a list merged by {key:?} must be maps"
                    ));
                };
                let Some(id) = item.get(key) else {
                    return Err(format!(
                        "map: {} does not contain declared merge key: {key}",
                        go_text(&Value::Object(item.clone()))
                    ));
                };
                let at = merged.iter().position(|(_, v)| v.get(key) == Some(id));
                match item.get(PATCH).and_then(Value::as_str) {
                    Some("delete") => {
                        merged.retain(|(_, v)| v.get(key) != Some(id));
                        continue;
                    }
                    Some("merge") | None => {}
                    Some(other) => {
                        return Err(format!(
                            "unknown patch type: {other} in map: {}",
                            go_text(&Value::Object(item.clone()))
                        ));
                    }
                }
                match at {
                    Some(at) => {
                        let (index, old) = std::mem::take(&mut merged[at]);
                        let Value::Object(old) = old else {
                            merged[at] = (index, clean(&Value::Object(item.clone()), items)?);
                            continue;
                        };
                        match merge_map(old, item, items)? {
                            Some(map) => merged[at] = (index, Value::Object(map)),
                            None => {
                                merged.remove(at);
                            }
                        }
                    }
                    None => {
                        let fresh = merge_map(Map::new(), item, items)?;
                        if let Some(map) = fresh {
                            merged.push((None, Value::Object(map)));
                        }
                    }
                }
            }
        }
    }
    let Some(order) = order else {
        return Ok(merged.into_iter().map(|(_, v)| v).collect());
    };
    let Value::Array(order) = order else {
        return Err("$setElementOrder must be a list".into());
    };
    // The listed elements in the listed order; the others keep their place
    // among them by their position in the stored list.
    let rank = |value: &Value| -> Option<usize> {
        order.iter().position(|o| match meta.merge_key {
            Some(key) => o.get(key).is_some() && o.get(key) == value.get(key),
            None => o == value,
        })
    };
    let (mut listed, server_only): (Vec<_>, Vec<_>) =
        merged.into_iter().partition(|(_, v)| rank(v).is_some());
    listed.sort_by_key(|(_, v)| rank(v));
    let mut out = Vec::with_capacity(listed.len() + server_only.len());
    let mut server_only = server_only.into_iter().peekable();
    for (index, value) in listed {
        let here = index.unwrap_or(original_len);
        while server_only
            .peek()
            .is_some_and(|(i, _)| i.unwrap_or(original_len) < here)
        {
            if let Some((_, v)) = server_only.next() {
                out.push(v);
            }
        }
        out.push(value);
    }
    out.extend(server_only.map(|(_, v)| v));
    Ok(out)
}

fn diff_map(
    original: &Map<String, Value>,
    modified: &Map<String, Value>,
    node: Node<'_>,
) -> Map<String, Value> {
    let mut patch = Map::new();
    for (key, new) in modified {
        let old = original.get(key);
        if old == Some(new) {
            continue;
        }
        let (child, meta) = node.field(key);
        match (old, new) {
            (Some(Value::Object(o)), Value::Object(m)) if !meta.replace => {
                let sub = diff_map(o, m, child);
                if !sub.is_empty() {
                    patch.insert(key.clone(), Value::Object(sub));
                }
            }
            (Some(Value::Array(o)), Value::Array(m)) if meta.merge => {
                diff_list(key, o, m, child, meta, &mut patch);
            }
            _ => {
                patch.insert(key.clone(), new.clone());
            }
        }
    }
    for key in original.keys() {
        if !modified.contains_key(key) {
            patch.insert(key.clone(), Value::Null);
        }
    }
    patch
}

/// The patch entries of a merged list `key`: its changed and new elements,
/// deletions, and the order it must end in.
fn diff_list(
    key: &str,
    original: &[Value],
    modified: &[Value],
    node: Node<'_>,
    meta: FieldMeta<'_>,
    patch: &mut Map<String, Value>,
) {
    let order_key = format!("{SET_ELEMENT_ORDER}{key}");
    let primitive = original.iter().chain(modified).all(|v| !v.is_object());
    match meta.merge_key {
        Some(merge_key) if !primitive => {
            let id = |v: &Value| v.get(merge_key).cloned();
            let mut items = Vec::new();
            for new in modified {
                match original.iter().find(|o| id(o) == id(new)) {
                    None => items.push(new.clone()),
                    Some(old) if old == new => {}
                    Some(old) => {
                        let (Value::Object(o), Value::Object(m)) = (old, new) else {
                            items.push(new.clone());
                            continue;
                        };
                        let mut sub = diff_map(o, m, node.items());
                        if let Some(value) = id(new) {
                            sub.insert(merge_key.to_owned(), value);
                        }
                        items.push(Value::Object(sub));
                    }
                }
            }
            for old in original {
                if !modified.iter().any(|m| id(m) == id(old)) {
                    let mut gone = Map::new();
                    if let Some(value) = id(old) {
                        gone.insert(merge_key.to_owned(), value);
                    }
                    gone.insert(PATCH.to_owned(), Value::String("delete".into()));
                    items.push(Value::Object(gone));
                }
            }
            let order: Vec<Value> = modified
                .iter()
                .map(|m| {
                    let mut entry = Map::new();
                    if let Some(value) = id(m) {
                        entry.insert(merge_key.to_owned(), value);
                    }
                    Value::Object(entry)
                })
                .collect();
            if !items.is_empty() {
                patch.insert(key.to_owned(), Value::Array(items));
            }
            patch.insert(order_key, Value::Array(order));
        }
        _ => {
            let added: Vec<Value> = modified
                .iter()
                .filter(|m| !original.contains(m))
                .cloned()
                .collect();
            let removed: Vec<Value> = original
                .iter()
                .filter(|o| !modified.contains(o))
                .cloned()
                .collect();
            if !added.is_empty() {
                patch.insert(key.to_owned(), Value::Array(added));
            }
            if !removed.is_empty() {
                patch.insert(
                    format!("{DELETE_FROM_PRIMITIVE_LIST}{key}"),
                    Value::Array(removed),
                );
            }
            patch.insert(order_key, Value::Array(modified.to_vec()));
        }
    }
}

/// A patch value written where nothing was: its directives applied to
/// nothing (a map with `$patch: delete` elements in its lists loses them).
fn clean(value: &Value, node: Node<'_>) -> Result<Value, String> {
    match value {
        Value::Object(map) => Ok(Value::Object(clean_map(map, node)?)),
        Value::Array(list) => Ok(Value::Array(
            list.iter()
                .filter(|v| v.get(PATCH).is_none())
                .map(|v| clean(v, node.items()))
                .collect::<Result<_, _>>()?,
        )),
        other => Ok(other.clone()),
    }
}

fn clean_map(map: &Map<String, Value>, node: Node<'_>) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for (key, value) in map {
        if key.starts_with('$') || value.is_null() {
            continue;
        }
        let (child, _) = node.field(key);
        out.insert(key.clone(), clean(value, child)?);
    }
    Ok(out)
}

fn display(value: Option<&str>) -> String {
    value.unwrap_or("(not a string)").to_owned()
}

/// A value as Go's `%v` prints a decoded JSON value in upstream's messages:
/// `map[image:nginx name:web]` (keys sorted), `[a b]`, `<nil>`.
fn go_text(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_text(&map[k])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_text).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
