//! How kube-apiserver stores a CustomResourceDefinition: as
//! `apiextensions.k8s.io/v1beta1` JSON, the more compact form, whatever the
//! storage media type. A definition goes from v1 to v1beta1 as
//! apiextensions-apiserver converts it through its internal version (the
//! first version's name becomes `spec.version`; a schema, subresources,
//! printer columns or selectable fields that every version shares move up to
//! `spec`; the conversion webhook's settings move up a level) and comes back
//! with v1beta1's defaults applied first. Both work on JSON values: v1beta1
//! has no type here.

use kapi_runtime::resource::StoredForm;
use serde_json::{Map, Value};

/// The stored version of CustomResourceDefinitions.
pub static STORED_AS_V1BETA1: StoredForm = StoredForm {
    api_version: "apiextensions.k8s.io/v1beta1",
    to_stored: to_v1beta1,
    from_stored: from_v1beta1,
};

/// The fields a version may hold that v1beta1 keeps once in `spec` when
/// every version has the same: (the version's key, the spec's key).
const SHARED: [(&str, &str); 3] = [
    ("subresources", "subresources"),
    ("schema", "validation"),
    ("additionalPrinterColumns", "additionalPrinterColumns"),
];

fn to_v1beta1(crd: &mut Value) -> Result<(), String> {
    crd["apiVersion"] = STORED_AS_V1BETA1.api_version.into();
    let spec = object_mut(crd, "spec")?;
    // v1's `preserveUnknownFields` is a plain bool, written even when false:
    // v1beta1 reads an absent one as true.
    let preserve = spec
        .get("preserveUnknownFields")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    spec.insert("preserveUnknownFields".into(), preserve.into());
    if let Some(Value::Object(conversion)) = spec.get_mut("conversion")
        && let Some(Value::Object(mut webhook)) = conversion.remove("webhook")
    {
        if let Some(config) = webhook.remove("clientConfig") {
            conversion.insert("webhookClientConfig".into(), config);
        }
        if let Some(versions) = webhook.remove("conversionReviewVersions") {
            conversion.insert("conversionReviewVersions".into(), versions);
        }
    }
    let Some(Value::Array(versions)) = spec.get_mut("versions") else {
        return Ok(());
    };
    let Some(first) = versions.first() else {
        return Ok(());
    };
    let name = first.get("name").cloned().unwrap_or(Value::Null);
    let mut hoisted = Vec::new();
    for (in_version, in_spec) in SHARED {
        if let Some(shared) = shared_by_all(versions, in_version) {
            hoisted.push((in_spec, shared));
            remove_from_all(versions, in_version);
        }
    }
    // Selectable fields move up with the schema they name.
    let schema_moved = hoisted.iter().any(|(key, _)| *key == "validation");
    if schema_moved && let Some(shared) = shared_by_all(versions, "selectableFields") {
        hoisted.push(("selectableFields", shared));
        remove_from_all(versions, "selectableFields");
    }
    for version in versions.iter_mut().filter_map(Value::as_object_mut) {
        rename_column_paths(version, "jsonPath", "JSONPath");
    }
    spec.insert("version".into(), name);
    for (key, value) in hoisted {
        if !value.is_null() {
            spec.insert(key.into(), value);
        }
    }
    rename_column_paths(spec, "jsonPath", "JSONPath");
    Ok(())
}

fn from_v1beta1(crd: &mut Value) -> Result<(), String> {
    crd["apiVersion"] = "apiextensions.k8s.io/v1".into();
    let spec = object_mut(crd, "spec")?;
    default_v1beta1(spec);
    rename_column_paths(spec, "JSONPath", "jsonPath");
    let mut restored = std::mem::take(spec);
    let version = restored.remove("version");
    let versions = restored
        .entry("versions")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let (Value::Array(list), Some(Value::String(name))) = (&mut *versions, &version)
        && list.is_empty()
        && !name.is_empty()
    {
        list.push(serde_json::json!({"name": name, "served": true, "storage": true}));
    }
    let mut shared = Vec::new();
    for (in_version, in_spec) in SHARED
        .iter()
        .copied()
        .chain([("selectableFields", "selectableFields")])
    {
        if let Some(value) = restored.remove(in_spec).filter(|v| !v.is_null()) {
            shared.push((in_version, value));
        }
    }
    if let Some(Value::Array(list)) = restored.get_mut("versions") {
        for version in list.iter_mut().filter_map(Value::as_object_mut) {
            for (key, value) in &shared {
                version.insert((*key).into(), value.clone());
            }
            rename_column_paths(version, "JSONPath", "jsonPath");
        }
    }
    if let Some(Value::Object(conversion)) = restored.get_mut("conversion") {
        let config = conversion.remove("webhookClientConfig");
        let review = conversion.remove("conversionReviewVersions");
        if config.is_some() || review.is_some() {
            let mut webhook = Map::new();
            if let Some(config) = config {
                webhook.insert("clientConfig".into(), config);
            }
            if let Some(review) = review {
                webhook.insert("conversionReviewVersions".into(), review);
            }
            conversion.insert("webhook".into(), Value::Object(webhook));
        }
    }
    *object_mut(crd, "spec")? = restored;
    Ok(())
}

/// v1beta1's defaults (SetDefaults_CustomResourceDefinitionSpec), which a
/// stored definition is read with before it becomes v1.
fn default_v1beta1(spec: &mut Map<String, Value>) {
    let absent = |v: Option<&Value>| v.is_none_or(|v| v.is_null() || v.as_str() == Some(""));
    if absent(spec.get("scope")) {
        spec.insert("scope".into(), "Namespaced".into());
    }
    if let Some(Value::Object(names)) = spec.get_mut("names") {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if absent(names.get("singular")) {
            names.insert("singular".into(), kind.to_lowercase().into());
        }
        if absent(names.get("listKind")) && !kind.is_empty() {
            names.insert("listKind".into(), format!("{kind}List").into());
        }
    }
    let first_version = spec
        .get("versions")
        .and_then(Value::as_array)
        .and_then(|v| v.first())
        .and_then(|v| v.get("name"))
        .cloned();
    if absent(spec.get("version"))
        && let Some(name) = first_version
    {
        spec.insert("version".into(), name);
    }
    let conversion = spec
        .entry("conversion")
        .or_insert_with(|| serde_json::json!({"strategy": "None"}));
    if let Value::Object(conversion) = conversion
        && conversion.get("strategy").and_then(Value::as_str) == Some("Webhook")
        && conversion
            .get("conversionReviewVersions")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    {
        conversion.insert(
            "conversionReviewVersions".into(),
            serde_json::json!(["v1beta1"]),
        );
    }
    if spec.get("preserveUnknownFields").is_none_or(Value::is_null) {
        spec.insert("preserveUnknownFields".into(), true.into());
    }
}

/// The value every version holds under `key` when all hold the same
/// (absent, null and empty lists counting as one, as Go's semantic
/// equality counts nil and empty), else `None`.
fn shared_by_all(versions: &[Value], key: &str) -> Option<Value> {
    let normal = |v: &Value| match v.get(key) {
        None | Some(Value::Null) => Value::Null,
        Some(Value::Array(a)) if a.is_empty() => Value::Null,
        Some(v) => v.clone(),
    };
    let first = normal(versions.first()?);
    versions.iter().all(|v| normal(v) == first).then_some(first)
}

fn remove_from_all(versions: &mut [Value], key: &str) {
    for version in versions.iter_mut().filter_map(Value::as_object_mut) {
        version.remove(key);
    }
}

/// Renames the path key of the printer columns `holder` has (`jsonPath` in
/// v1, `JSONPath` in v1beta1).
fn rename_column_paths(holder: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(Value::Array(columns)) = holder.get_mut("additionalPrinterColumns") {
        for column in columns.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(path) = column.remove(from) {
                column.insert(to.into(), path);
            }
        }
    }
}

fn object_mut<'a>(crd: &'a mut Value, key: &str) -> Result<&'a mut Map<String, Value>, String> {
    crd.get_mut(key)
        .and_then(Value::as_object_mut)
        .ok_or_else(|| format!("a CustomResourceDefinition without {key}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn v1() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.bar.example.com"},
            "spec": {
                "group": "bar.example.com",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                "scope": "Namespaced",
                "versions": [
                    {"name": "v1", "served": true, "storage": true,
                     "schema": {"openAPIV3Schema": {"type": "object"}},
                     "subresources": {"status": {}},
                     "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]},
                    {"name": "v2", "served": true, "storage": false,
                     "schema": {"openAPIV3Schema": {"type": "object"}},
                     "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.r", "statusReplicasPath": ".status.r"}},
                     "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]}
                ],
                "conversion": {"strategy": "Webhook", "webhook": {
                    "clientConfig": {"url": "https://h/convert"},
                    "conversionReviewVersions": ["v1"]}}
            },
            "status": {"storedVersions": ["v1"]}
        })
    }

    #[test]
    fn a_definition_is_stored_as_upstream_stores_it() {
        let mut crd = v1();
        to_v1beta1(&mut crd).unwrap();
        assert_eq!(
            crd["spec"],
            json!({
                "group": "bar.example.com",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                "scope": "Namespaced",
                "version": "v1",
                "validation": {"openAPIV3Schema": {"type": "object"}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "JSONPath": ".spec.size"}],
                "versions": [
                    {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}}},
                    {"name": "v2", "served": true, "storage": false,
                     "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.r", "statusReplicasPath": ".status.r"}}}
                ],
                "conversion": {"strategy": "Webhook",
                    "webhookClientConfig": {"url": "https://h/convert"},
                    "conversionReviewVersions": ["v1"]},
                "preserveUnknownFields": false
            })
        );
        assert_eq!(crd["apiVersion"], "apiextensions.k8s.io/v1beta1");
    }

    #[test]
    fn a_stored_definition_reads_back_as_it_was_written() {
        let mut crd = v1();
        to_v1beta1(&mut crd).unwrap();
        from_v1beta1(&mut crd).unwrap();
        let mut expected = v1();
        expected["spec"]["preserveUnknownFields"] = false.into();
        assert_eq!(crd, expected);
    }

    #[test]
    fn an_old_definition_is_read_with_v1beta1_defaults() {
        let mut crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1beta1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "olds.example.com"},
            "spec": {"group": "example.com", "version": "v1alpha1",
                     "names": {"plural": "olds", "kind": "Old"},
                     "validation": {"openAPIV3Schema": {"type": "object"}}}
        });
        from_v1beta1(&mut crd).unwrap();
        assert_eq!(
            crd["spec"],
            json!({"group": "example.com", "scope": "Namespaced",
                   "names": {"plural": "olds", "kind": "Old", "singular": "old", "listKind": "OldList"},
                   "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                                 "schema": {"openAPIV3Schema": {"type": "object"}}}],
                   "conversion": {"strategy": "None"},
                   "preserveUnknownFields": true})
        );
    }
}
