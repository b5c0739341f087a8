//! Other servers' OpenAPI v2 documents merged into this server's, as
//! kube-openapi's aggregator merges an extension server's into
//! kube-apiserver's (`FilterSpecByPathsWithoutSideEffects`, then
//! `MergeSpecsIgnorePathConflictRenamingDefinitionsAndParameters`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

const REF_PREFIX: &str = "#/definitions/";

/// The names of the definitions `value` refers to (`$ref`s), directly.
fn refs(value: &Value, found: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                if key == "$ref"
                    && let Some(name) = inner.as_str().and_then(|r| r.strip_prefix(REF_PREFIX))
                {
                    found.insert(name.to_owned());
                } else {
                    refs(inner, found);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| refs(i, found)),
        _ => {}
    }
}

/// `spec` with only the paths under `prefix` (`/apis/<group>/<version>/`),
/// and without the definitions only the dropped paths used; definitions
/// nothing referred to stay.
pub fn filter_paths(spec: &Value, prefix: &str) -> Value {
    let mut out = spec.clone();
    let definitions = spec["definitions"].as_object().cloned().unwrap_or_default();
    // Every definition referred to by anything at all, before filtering.
    let mut referred = BTreeSet::new();
    refs(&spec["paths"], &mut referred);
    for definition in definitions.values() {
        refs(definition, &mut referred);
    }
    let kept_paths: Map<String, Value> = spec["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(path, _)| path.starts_with(prefix))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // What the kept paths reach.
    let mut reached = BTreeSet::new();
    refs(&Value::Object(kept_paths.clone()), &mut reached);
    let mut queue: Vec<String> = reached.iter().cloned().collect();
    while let Some(name) = queue.pop() {
        let mut next = BTreeSet::new();
        if let Some(definition) = definitions.get(&name) {
            refs(definition, &mut next);
        }
        for found in next {
            if reached.insert(found.clone()) {
                queue.push(found);
            }
        }
    }
    let kept_definitions: Map<String, Value> = definitions
        .into_iter()
        .filter(|(name, _)| reached.contains(name) || !referred.contains(name))
        .collect();
    out["paths"] = Value::Object(kept_paths);
    out["definitions"] = Value::Object(kept_definitions);
    out
}

/// A definition without its group-version-kind list, to compare two.
fn without_gvk(definition: &Value) -> Value {
    let mut definition = definition.clone();
    if let Some(map) = definition.as_object_mut() {
        map.remove("x-kubernetes-group-version-kind");
    }
    definition
}

/// Renames the references to `renames`' keys in `value`.
fn rename_refs(value: &mut Value, renames: &BTreeMap<String, String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                if key == "$ref"
                    && let Some(name) = inner.as_str().and_then(|r| r.strip_prefix(REF_PREFIX))
                    && let Some(renamed) = renames.get(name)
                {
                    *inner = Value::String(format!("{REF_PREFIX}{renamed}"));
                } else {
                    rename_refs(inner, renames);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| rename_refs(i, renames)),
        _ => {}
    }
}

/// Merges `other` into `base`: a path `base` has keeps `base`'s; a
/// definition `base` has the same of (group-version-kind lists aside)
/// is shared, its lists joined; a different one is renamed `<name>_v2`
/// (`_v3`, ... or an equal one already so named) in what is taken of
/// `other`.
pub fn merge(base: &mut Value, other: &Value) {
    let mut other = other.clone();
    let base_definitions = base["definitions"].as_object().cloned().unwrap_or_default();
    let mut renames = BTreeMap::new();
    let mut joined: Vec<(String, Value)> = Vec::new();
    for (name, definition) in other["definitions"].as_object().into_iter().flatten() {
        let Some(existing) = base_definitions.get(name) else {
            continue;
        };
        if without_gvk(existing) == without_gvk(definition) {
            joined.push((name.clone(), definition.clone()));
            continue;
        }
        let mut n = 2;
        loop {
            let candidate = format!("{name}_v{n}");
            match base_definitions.get(&candidate) {
                Some(found) if without_gvk(found) != without_gvk(definition) => n += 1,
                _ => {
                    renames.insert(name.clone(), candidate);
                    break;
                }
            }
        }
    }
    rename_refs(&mut other, &renames);
    let Some(base_map) = base.as_object_mut() else {
        return;
    };
    let paths = base_map
        .entry("paths")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(paths) = paths.as_object_mut() {
        for (path, item) in other["paths"].as_object().into_iter().flatten() {
            paths.entry(path.clone()).or_insert_with(|| item.clone());
        }
    }
    let definitions = base_map
        .entry("definitions")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(definitions) = definitions.as_object_mut() else {
        return;
    };
    for (name, definition) in other["definitions"].as_object().into_iter().flatten() {
        let target = renames.get(name).unwrap_or(name);
        if joined.iter().any(|(n, _)| n == name) {
            join_gvks(definitions.get_mut(name), definition);
            continue;
        }
        definitions
            .entry(target.clone())
            .or_insert_with(|| definition.clone());
    }
}

/// The union of two definitions' group-version-kind lists, sorted by
/// `<group>/<version>.<kind>`.
fn join_gvks(base: Option<&mut Value>, other: &Value) {
    let Some(base) = base.and_then(Value::as_object_mut) else {
        return;
    };
    let key = "x-kubernetes-group-version-kind";
    let mut all: Vec<Value> = base
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for gvk in other[key].as_array().into_iter().flatten() {
        if !all.contains(gvk) {
            all.push(gvk.clone());
        }
    }
    if all.is_empty() {
        return;
    }
    let sort_key = |g: &Value| {
        format!(
            "{}/{}.{}",
            g["group"].as_str().unwrap_or_default(),
            g["version"].as_str().unwrap_or_default(),
            g["kind"].as_str().unwrap_or_default()
        )
    };
    all.sort_by_key(sort_key);
    base.insert(key.to_owned(), Value::Array(all));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_are_kept_by_prefix_with_what_they_use() {
        let spec = json!({"paths": {
                "/apis/w.example.com/v1/flunders": {"get": {"$ref": "#/definitions/Flunder"}},
                "/version/": {"get": {"$ref": "#/definitions/Info"}}},
            "definitions": {"Flunder": {"properties": {"m": {"$ref": "#/definitions/Meta"}}},
                "Meta": {}, "Info": {}, "Lonely": {}}});
        let kept = filter_paths(&spec, "/apis/w.example.com/v1/");
        assert_eq!(
            kept["paths"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["/apis/w.example.com/v1/flunders"]
        );
        let mut definitions: Vec<_> = kept["definitions"].as_object().unwrap().keys().collect();
        definitions.sort();
        assert_eq!(definitions, ["Flunder", "Lonely", "Meta"]);
    }

    #[test]
    fn different_definitions_of_one_name_are_renamed() {
        let mut base = json!({"paths": {"/a": {}}, "definitions": {
            "Meta": {"type": "object", "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Meta"}]},
            "Status": {"type": "object"}}});
        let other = json!({"paths": {"/a": {"x": 1}, "/b": {"$ref": "#/definitions/Status"}},
            "definitions": {
                "Meta": {"type": "object", "x-kubernetes-group-version-kind": [{"group": "a", "version": "v1", "kind": "Meta"}]},
                "Status": {"type": "string"}}});
        merge(&mut base, &other);
        assert_eq!(base["paths"]["/a"], json!({}));
        assert_eq!(
            base["paths"]["/b"],
            json!({"$ref": "#/definitions/Status_v2"})
        );
        assert_eq!(base["definitions"]["Status_v2"], json!({"type": "string"}));
        assert_eq!(
            base["definitions"]["Meta"]["x-kubernetes-group-version-kind"],
            json!([{"group": "", "version": "v1", "kind": "Meta"}, {"group": "a", "version": "v1", "kind": "Meta"}])
        );
    }
}
