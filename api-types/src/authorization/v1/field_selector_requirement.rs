//! One requirement of a field selector: apimachinery's `meta/v1`
//! `FieldSelectorRequirement`, which only this group uses so far.

use kapi_codegen::ApiType;
use kapi_runtime::openapi::{Definitions, object, property};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::go_json::omitempty;

/// A field, an operator and values: `In`, `NotIn`, `Exists` or
/// `DoesNotExist`, as in label selectors.
///
/// Its OpenAPI definition carries apimachinery's name
/// (`io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement`), like the
/// runtime's meta types, hence the hand-written schema.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(schema = field_selector_requirement_schema)]
pub struct FieldSelectorRequirement {
    /// The field path, e.g. `spec.nodeName`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`; an unknown one is let
    /// through (the reviews' validation says why).
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub operator: String,
    /// Values for `In` and `NotIn`; empty for the others.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub values: Option<Vec<String>>,
}

/// The definition, under apimachinery's name.
fn field_selector_requirement_schema(defs: &mut Definitions) -> Value {
    defs.define(
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement",
        |_| {
            let string = || json!({"type": "string"});
            let mut properties = Map::new();
            properties.insert(
                "key".into(),
                property(string(), "The field path, e.g. `spec.nodeName`.", &[]),
            );
            properties.insert(
                "operator".into(),
                property(string(), "`In`, `NotIn`, `Exists` or `DoesNotExist`.", &[]),
            );
            properties.insert(
                "values".into(),
                property(
                    json!({"type": "array", "items": string()}),
                    "Values for `In` and `NotIn`; empty for the others.",
                    &[("x-kubernetes-list-type", json!("atomic"))],
                ),
            );
            object(
                "A field, an operator and values: `In`, `NotIn`, `Exists` or `DoesNotExist`, as in label selectors.",
                properties,
                vec!["key".into(), "operator".into()],
            )
        },
    )
}
