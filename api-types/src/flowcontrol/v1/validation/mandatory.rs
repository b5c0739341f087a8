//! The mandatory objects of API Priority and Fairness: the `exempt` and
//! `catch-all` flow schemas and priority levels, which the API server keeps
//! and whose spec may not differ from the built-in one (for the `exempt`
//! level, except its `exempt` settings).
//!
//! Upstream compares the defaulted specs semantically (an empty list equals an
//! absent one) and prints the offending spec with Go's `%#v`, pointers
//! included; we print it as JSON.

use kapi_runtime::validation::{FieldErrors, FieldPath};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::super::flowschema::FlowSchemaSpec;
use super::super::prioritylevelconfiguration::PriorityLevelConfigurationSpec;
use crate::validation::Raw;

/// The rule of both mandatory schemas: the given groups may do everything.
fn everything_for(groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"kind": "Group", "group": {"name": g}}))
        .collect();
    json!([{
        "subjects": subjects,
        "resourceRules": [{
            "verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
            "clusterScope": true, "namespaces": ["*"],
        }],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    }])
}

/// The built-in spec of a mandatory flow schema, defaulted.
fn mandatory_flow_schema(name: &str) -> Option<FlowSchemaSpec> {
    let spec = match name {
        "exempt" => json!({
            "priorityLevelConfiguration": {"name": "exempt"},
            "matchingPrecedence": 1,
            "rules": everything_for(&["system:masters"]),
        }),
        "catch-all" => json!({
            "priorityLevelConfiguration": {"name": "catch-all"},
            "matchingPrecedence": 10000,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": everything_for(&["system:unauthenticated", "system:authenticated"]),
        }),
        _ => return None,
    };
    serde_json::from_value(spec).ok()
}

/// The built-in spec of a mandatory priority level, defaulted.
fn mandatory_priority_level(name: &str) -> Option<PriorityLevelConfigurationSpec> {
    let spec = match name {
        "exempt" => json!({
            "type": "Exempt",
            "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0},
        }),
        "catch-all" => json!({
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": 5,
                "limitResponse": {"type": "Reject"},
                "lendablePercent": 0,
            },
        }),
        _ => return None,
    };
    serde_json::from_value(spec).ok()
}

/// A mandatory flow schema's spec must be the built-in one.
pub(super) fn check_flow_schema(
    name: &str,
    spec: &FlowSchemaSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let Some(fixed) = mandatory_flow_schema(name) else {
        return;
    };
    if !semantic_eq(spec, &fixed) {
        let detail = format!("spec of '{name}' must equal the fixed value");
        errs.invalid(path.clone(), Raw(&as_json(spec)), &detail);
    }
}

/// A mandatory priority level's spec must be the built-in one; the `exempt`
/// level's `exempt` settings may differ.
pub(super) fn check_priority_level(
    name: &str,
    spec: &PriorityLevelConfigurationSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let Some(mut fixed) = mandatory_priority_level(name) else {
        return;
    };
    let detail = if name == "exempt" {
        fixed.exempt.clone_from(&spec.exempt);
        format!("spec of '{name}' except the 'spec.exempt' field must equal the fixed value")
    } else {
        format!("spec of '{name}' must equal the fixed value")
    };
    if !semantic_eq(spec, &fixed) {
        errs.invalid(path.clone(), Raw(&as_json(spec)), &detail);
    }
}

/// Go's semantic equality on the wire form: empty lists and `false` count as
/// absent (Go's nil and empty slices are equal, and `clusterScope` is a plain
/// bool), while a pointer to zero differs from nil.
fn semantic_eq<T: Serialize + DeserializeOwned>(a: &T, b: &T) -> bool {
    let canonical = |v: &T| serde_json::to_value(v).map(strip_empty).ok();
    canonical(a) == canonical(b)
}

/// Drops nulls, empty lists and `false` from objects, recursively.
fn strip_empty(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, strip_empty(v)))
                .filter(|(_, v)| !matches!(v, Value::Null | Value::Bool(false)))
                .filter(|(_, v)| !v.as_array().is_some_and(Vec::is_empty))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_empty).collect()),
        other => other,
    }
}

/// The spec as JSON, for the message.
fn as_json<T: Serialize>(spec: &T) -> String {
    serde_json::to_string(spec).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::{mandatory_flow_schema, mandatory_priority_level};

    #[test]
    fn the_fixed_specs_decode() {
        for name in ["exempt", "catch-all"] {
            assert!(mandatory_flow_schema(name).is_some(), "{name}");
            assert!(mandatory_priority_level(name).is_some(), "{name}");
        }
    }
}
