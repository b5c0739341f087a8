use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::validation::{FieldErrors, FieldPath};
use kapi_codegen::ApiType;

/// A structured label query (metav1.LabelSelector): all requirements are ANDed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
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

impl LabelSelector {
    /// The selector in the label-selector text syntax, as Kubernetes prints
    /// it (`labels.Selector.String()`, e.g. a Scale's `status.selector`):
    /// requirements sorted by key, `k=v` for each matched label, `k in (a,b)`,
    /// `k notin (a,b)`, `k` and `!k` for the expressions; `""` when empty.
    pub fn to_selector_string(&self) -> String {
        let mut requirements: Vec<(&str, String)> = Vec::new();
        for (key, value) in self.match_labels.iter().flatten() {
            requirements.push((key, format!("{key}={value}")));
        }
        for req in self.match_expressions.iter().flatten() {
            let key = req.key.as_str();
            let mut values: Vec<&str> = req.values.iter().flatten().map(String::as_str).collect();
            values.sort_unstable();
            let text = match req.operator.as_str() {
                "In" => format!("{key} in ({})", values.join(",")),
                "NotIn" => format!("{key} notin ({})", values.join(",")),
                "Exists" => key.to_owned(),
                "DoesNotExist" => format!("!{key}"),
                other => format!("{key} {other} ({})", values.join(",")),
            };
            requirements.push((key, text));
        }
        requirements.sort_by(|a, b| a.0.cmp(b.0));
        requirements
            .into_iter()
            .map(|(_, text)| text)
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_print_as_kubernetes_prints_them() {
        let selector = LabelSelector {
            match_labels: Some([("app".to_owned(), "web".to_owned())].into()),
            match_expressions: Some(vec![
                LabelSelectorRequirement {
                    key: "tier".into(),
                    operator: "In".into(),
                    values: Some(vec!["front".into(), "back".into()]),
                },
                LabelSelectorRequirement {
                    key: "canary".into(),
                    operator: "DoesNotExist".into(),
                    values: None,
                },
                LabelSelectorRequirement {
                    key: "env".into(),
                    operator: "NotIn".into(),
                    values: Some(vec!["prod".into()]),
                },
                LabelSelectorRequirement {
                    key: "zone".into(),
                    operator: "Exists".into(),
                    values: None,
                },
            ]),
        };
        assert_eq!(
            selector.to_selector_string(),
            "app=web,!canary,env notin (prod),tier in (back,front),zone"
        );
        assert_eq!(LabelSelector::default().to_selector_string(), "");
    }
}
