//! Label sets and label selectors as Kubernetes prints and evaluates them
//! (k8s.io/apimachinery/pkg/labels): for table cells and selector checks.

use std::collections::BTreeMap;
use std::fmt;

use kapi_runtime::meta::{LabelSelector, LabelSelectorRequirement};

/// `a=1,b=2` (sorted by key), or `<none>` for an empty set.
pub(crate) fn format_labels(labels: Option<&BTreeMap<String, String>>) -> String {
    let pairs: Vec<String> = labels
        .iter()
        .flat_map(|l| l.iter())
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if pairs.is_empty() {
        "<none>".to_owned()
    } else {
        pairs.join(",")
    }
}

/// A selector as `app=web,tier in (a,b),!legacy` (requirements sorted by key), or
/// `<none>` when it selects nothing or is absent.
pub(crate) fn format_selector(selector: Option<&LabelSelector>) -> String {
    let Some(selector) = selector else {
        return "<none>".to_owned();
    };
    let mut requirements: Vec<(String, String)> = selector
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), format!("{k}={v}")))
        .collect();
    for req in selector.match_expressions.iter().flatten() {
        requirements.push((req.key.clone(), format_requirement(req)));
    }
    requirements.sort();
    let text: Vec<String> = requirements.into_iter().map(|(_, r)| r).collect();
    if text.is_empty() {
        "<none>".to_owned()
    } else {
        text.join(",")
    }
}

fn format_requirement(req: &LabelSelectorRequirement) -> String {
    let mut values = req.values.clone().unwrap_or_default();
    values.sort();
    let key = &req.key;
    match req.operator.as_str() {
        "In" => format!("{key} in ({})", values.join(",")),
        "NotIn" => format!("{key} notin ({})", values.join(",")),
        "Exists" => key.clone(),
        "DoesNotExist" => format!("!{key}"),
        other => format!("{key} {other} ({})", values.join(",")),
    }
}

/// Whether a selector has no requirement at all (it then matches everything).
pub(crate) fn selector_is_empty(selector: &LabelSelector) -> bool {
    selector
        .match_labels
        .as_ref()
        .is_none_or(BTreeMap::is_empty)
        && selector
            .match_expressions
            .as_ref()
            .is_none_or(Vec::is_empty)
}

/// Whether `labels` satisfy every requirement of `selector`.
pub(crate) fn selector_matches(
    selector: &LabelSelector,
    labels: Option<&BTreeMap<String, String>>,
) -> bool {
    let get = |key: &str| labels.and_then(|l| l.get(key)).map(String::as_str);
    let exact = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| get(k) == Some(v.as_str()));
    exact
        && selector.match_expressions.iter().flatten().all(|req| {
            let value = get(&req.key);
            let values = req.values.as_deref().unwrap_or_default();
            let listed = value.is_some_and(|v| values.iter().any(|x| x == v));
            match req.operator.as_str() {
                "In" => listed,
                "NotIn" => !listed,
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => false,
            }
        })
}

/// A label map printed as Go's `%#v` prints it in validation messages:
/// `map[string]string{"app":"web"}`.
pub(crate) struct GoMap<'a>(pub Option<&'a BTreeMap<String, String>>);

impl fmt::Debug for GoMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(map) = self.0 else {
            return f.write_str("map[string]string(nil)");
        };
        let pairs: Vec<String> = map.iter().map(|(k, v)| format!("{k:?}:{v:?}")).collect();
        write!(f, "map[string]string{{{}}}", pairs.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn formats_like_kubectl() {
        assert_eq!(
            format_labels(Some(&labels(&[("b", "2"), ("a", "1")]))),
            "a=1,b=2"
        );
        assert_eq!(format_labels(None), "<none>");
        let selector = LabelSelector {
            match_labels: Some(labels(&[("app", "web")])),
            match_expressions: Some(vec![
                LabelSelectorRequirement {
                    key: "tier".into(),
                    operator: "In".into(),
                    values: Some(vec!["b".into(), "a".into()]),
                },
                LabelSelectorRequirement {
                    key: "legacy".into(),
                    operator: "DoesNotExist".into(),
                    values: None,
                },
            ]),
        };
        assert_eq!(
            format_selector(Some(&selector)),
            "app=web,!legacy,tier in (a,b)"
        );
        assert!(selector_matches(
            &selector,
            Some(&labels(&[("app", "web"), ("tier", "a")]))
        ));
        assert!(!selector_matches(
            &selector,
            Some(&labels(&[("app", "web"), ("legacy", "")]))
        ));
        assert!(!selector_matches(
            &selector,
            Some(&labels(&[("app", "api"), ("tier", "a")]))
        ));
    }
}
