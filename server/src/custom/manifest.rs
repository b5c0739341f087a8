//! A compiled kind as a CustomResourceDefinition (`kapi crd <group/Kind>`):
//! its names, scope, printer columns, selectable fields, subresources and
//! each version's schema, made structural (every `$ref` inlined, ObjectMeta
//! left to the server, the rules' keywords of the struct's fields in place:
//! `enum`, `minimum`, `maximum`, `pattern`, `maxLength`, `default`).
//!
//! A CRD converts between versions only by renaming `apiVersion` (strategy
//! `None`) or through a webhook: a version whose schema differs from the
//! storage version's is left out, and named in the notes returned with the
//! manifest.

use std::collections::BTreeMap;

use kapi_runtime::ResourceInfo;
use kapi_runtime::openapi::{CRD_KEYWORDS, Definitions, referenced};
use kapi_runtime::scheme::{KindEntry, Scheme};
use serde_json::{Map, Value, json};

/// The definition of the kind `kind` of `group` in `scheme`, and notes
/// about what it leaves out.
pub fn crd(scheme: &Scheme, group: &str, kind: &str) -> Result<(Value, Vec<String>), String> {
    let entries: Vec<&KindEntry> = scheme
        .entries()
        .filter(|e| e.info.group == group && e.info.kind == kind)
        .collect();
    let Some(storage) = entries.iter().find(|e| e.hub().is_none()) else {
        return Err(format!("no kind {kind} in group {group:?}"));
    };
    let info = storage.info;
    let mut defs = Definitions::new();
    let storage_schema = version_schema(storage, &mut defs);
    let mut notes = Vec::new();
    let mut versions = Vec::new();
    for entry in &entries {
        let schema = version_schema(entry, &mut defs);
        if schema != storage_schema {
            notes.push(format!(
                "{}/{} is left out: it converts to {} by more than its apiVersion, which a CustomResourceDefinition can only do through a conversion webhook",
                group, entry.info.version, info.version
            ));
            continue;
        }
        versions.push(version(entry.info, std::ptr::eq(*entry, *storage), schema));
    }
    // Upstream lists versions by priority; the storage version first is
    // what a reader expects of a single-version definition.
    versions.sort_by_key(|v| v["storage"] != true);
    let mut names = Map::new();
    names.insert("kind".into(), json!(info.kind));
    names.insert("listKind".into(), json!(info.list_kind()));
    names.insert("plural".into(), json!(info.plural));
    names.insert("singular".into(), json!(info.singular));
    if !info.short_names.is_empty() {
        names.insert("shortNames".into(), json!(info.short_names));
    }
    if !info.categories.is_empty() {
        names.insert("categories".into(), json!(info.categories));
    }
    let manifest = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": { "name": format!("{}.{}", info.plural, info.group) },
        "spec": {
            "group": info.group,
            "names": names,
            "scope": if info.namespaced { "Namespaced" } else { "Cluster" },
            "versions": versions,
        },
    });
    Ok((manifest, notes))
}

/// `kapi crd <group/Kind>`: the definition of a compiled kind as YAML, and
/// its notes (for stderr). The core group is written `core/Kind` or `Kind`.
pub fn crd_yaml(scheme: &Scheme, target: &str) -> Result<(String, Vec<String>), String> {
    let (group, kind) = match target.rsplit_once('/') {
        Some(("core", kind)) => ("", kind),
        Some((group, kind)) => (group, kind),
        None => ("", target),
    };
    let (manifest, notes) = crd(scheme, group, kind)?;
    let mut yaml = serde_saphyr::to_string(&manifest).map_err(|e| e.to_string())?;
    if !yaml.ends_with('\n') {
        yaml.push('\n');
    }
    Ok((yaml, notes))
}

/// One entry of `spec.versions`.
fn version(info: &ResourceInfo, storage: bool, schema: Value) -> Value {
    let mut version = Map::new();
    version.insert("name".into(), json!(info.version));
    version.insert("served".into(), json!(true));
    version.insert("storage".into(), json!(storage));
    let columns: Vec<Value> = info
        .printer_columns
        .iter()
        .map(|c| {
            let mut column = Map::new();
            column.insert("name".into(), json!(c.name));
            column.insert("type".into(), json!(c.type_));
            if !c.format.is_empty() {
                column.insert("format".into(), json!(c.format));
            }
            if !c.description.is_empty() {
                column.insert("description".into(), json!(c.description));
            }
            if c.priority != 0 {
                column.insert("priority".into(), json!(c.priority));
            }
            column.insert("jsonPath".into(), json!(c.json_path));
            Value::Object(column)
        })
        .collect();
    let mut columns = columns;
    if info.age_column && !columns.is_empty() {
        // A definition with columns of its own shows no age unless it asks.
        let age = crate::table::AGE;
        columns.push(json!({
            "name": age.name,
            "type": age.type_,
            "description": age.description,
            "jsonPath": age.json_path,
        }));
    }
    if !columns.is_empty() {
        version.insert("additionalPrinterColumns".into(), Value::Array(columns));
    }
    if !info.selectable_fields.is_empty() {
        let fields: Vec<Value> = info
            .selectable_fields
            .iter()
            .map(|f| json!({ "jsonPath": format!(".{f}") }))
            .collect();
        version.insert("selectableFields".into(), Value::Array(fields));
    }
    version.insert("schema".into(), json!({ "openAPIV3Schema": schema }));
    let mut subresources = Map::new();
    if info.status_subresource {
        subresources.insert("status".into(), json!({}));
    }
    if let Some(scale) = info.scale {
        let mut s = Map::new();
        s.insert("specReplicasPath".into(), json!(scale.spec_replicas));
        s.insert("statusReplicasPath".into(), json!(scale.status_replicas));
        if !scale.label_selector.is_empty() {
            s.insert("labelSelectorPath".into(), json!(scale.label_selector));
        }
        subresources.insert("scale".into(), Value::Object(s));
    }
    if !subresources.is_empty() {
        version.insert("subresources".into(), Value::Object(subresources));
    }
    Value::Object(version)
}

/// A version's schema, structural: references inlined, the root's
/// `metadata` a plain object (the server owns its schema).
fn version_schema(entry: &KindEntry, defs: &mut Definitions) -> Value {
    let root = entry.schema(defs);
    let mut schema = inline(&root, defs, &mut Vec::new());
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        if let Some(Value::Object(metadata)) = properties.get_mut("metadata") {
            metadata.clear();
            metadata.insert("type".into(), json!("object"));
        }
        let mut with_type_meta: Map<String, Value> = kapi_runtime::openapi::type_meta_properties()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        with_type_meta.extend(std::mem::take(properties));
        *properties = with_type_meta;
    }
    schema
}

/// Definitions whose structural form is not what their compiled schema
/// says: kept as Kubernetes' CRDs write them.
fn special(name: &str) -> Option<Value> {
    let short = name.rsplit('.').next().unwrap_or(name);
    match (name, short) {
        (_, "IntOrString") => Some(json!({ "x-kubernetes-int-or-string": true })),
        (_, "Quantity") => Some(json!({
            "anyOf": [{ "type": "integer" }, { "type": "string" }],
            "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
            "x-kubernetes-int-or-string": true,
        })),
        (_, "Time" | "MicroTime") => Some(json!({ "type": "string", "format": "date-time" })),
        (_, "RawExtension") => Some(json!({
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
        })),
        (n, "ObjectMeta") if n.contains("apimachinery") => Some(json!({ "type": "object" })),
        _ => None,
    }
}

/// `schema` with every `$ref` replaced by its definition, the extensions a
/// CRD schema cannot carry removed and the CRD keywords lifted into place.
/// `seen` holds the definitions being inlined (a recursive type is cut off
/// as an object that keeps unknown fields).
fn inline(schema: &Value, defs: &Definitions, seen: &mut Vec<String>) -> Value {
    let Value::Object(node) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    if let Some(name) = referenced(schema) {
        let resolved = if let Some(special) = special(name) {
            special
        } else if seen.iter().any(|s| s == name) {
            json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true })
        } else {
            seen.push(name.to_owned());
            let resolved = defs
                .get(name)
                .map(|d| inline(d, defs, seen))
                .unwrap_or_else(|| json!({ "type": "object" }));
            seen.pop();
            resolved
        };
        if let Value::Object(resolved) = resolved {
            out.extend(resolved);
        }
    }
    let keywords: BTreeMap<String, Value> = node
        .get(CRD_KEYWORDS)
        .and_then(Value::as_object)
        .map(|k| k.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    for (key, value) in node {
        match key.as_str() {
            "$ref"
            | "x-kubernetes-patch-strategy"
            | "x-kubernetes-patch-merge-key"
            | "x-kubernetes-group-version-kind"
            | "x-kubernetes-unions" => {}
            k if k == CRD_KEYWORDS => {}
            "properties" => {
                let properties: Map<String, Value> = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), inline(v, defs, seen)))
                    .collect();
                out.insert(key.clone(), Value::Object(properties));
            }
            "items" | "additionalProperties" if value.is_object() => {
                out.insert(key.clone(), inline(value, defs, seen));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    out.extend(keywords);
    Value::Object(out)
}
