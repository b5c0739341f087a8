use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::validation::{FieldErrors, FieldPath};
use kapi_codegen::ApiType;

/// A structured label query (metav1.LabelSelector): all requirements are ANDed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// Labels that must have exactly these values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub match_labels: Option<BTreeMap<String, String>>,
    /// Set-based requirements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub match_expressions: Option<Vec<LabelSelectorRequirement>>,
}

/// One set-based requirement of a [`LabelSelector`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[api(validate = validate_requirement)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    /// The label key.
    #[api(required)]
    #[api(proto = 1)]
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    #[api(schema_required)]
    #[api(proto = 2)]
    pub operator: String,
    /// Values for `In` and `NotIn`; empty for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub values: Option<Vec<String>>,
}

/// The operator decides whether values are needed (metav1 validation).
fn validate_requirement(req: &LabelSelectorRequirement, path: &FieldPath, errs: &mut FieldErrors) {
    {
        let has_values = req.values.as_ref().is_some_and(|v| !v.is_empty());
        match req.operator.as_str() {
            "In" | "NotIn" if !has_values => errs.required(
                path.child("values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            ),
            "Exists" | "DoesNotExist" if has_values => errs.forbidden(
                path.child("values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errs.invalid(
                path.child("operator"),
                other,
                "not a valid selector operator",
            ),
        }
    }
}
