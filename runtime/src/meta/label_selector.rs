use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::api_type::ApiType;
use crate::validation::{FieldErrors, FieldPath};

/// A structured label query (metav1.LabelSelector): all requirements are ANDed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    /// Labels that must have exactly these values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_labels: Option<BTreeMap<String, String>>,
    /// Set-based requirements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_expressions: Option<Vec<LabelSelectorRequirement>>,
}

/// One set-based requirement of a [`LabelSelector`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    /// The label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: String,
    /// Values for `In` and `NotIn`; empty for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
}

impl ApiType for LabelSelector {
    fn validate(&self, path: &FieldPath, errs: &mut FieldErrors) {
        for (i, req) in self.match_expressions.iter().flatten().enumerate() {
            req.validate(&path.child("matchExpressions").index(i), errs);
        }
    }
}

impl ApiType for LabelSelectorRequirement {
    fn validate(&self, path: &FieldPath, errs: &mut FieldErrors) {
        let has_values = self.values.as_ref().is_some_and(|v| !v.is_empty());
        match self.operator.as_str() {
            "In" | "NotIn" if !has_values => errs.required(
                path.child("values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            ),
            "Exists" | "DoesNotExist" if has_values => errs.forbidden(
                path.child("values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errs.not_supported(
                path.child("operator"),
                other,
                &["DoesNotExist", "Exists", "In", "NotIn"],
            ),
        }
    }
}
