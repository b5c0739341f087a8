//! Label key and value checks with upstream's exact messages
//! (k8s.io/apimachinery/pkg/api/validate/content).

use std::collections::BTreeSet;

use serde_json::Value;

const NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const NAME_EXAMPLES: [&str; 3] = ["MyName", "my.name", "123-abc"];
const VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const SUBDOMAIN_FMT: &str = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/// Upstream `IsLabelKey` (a "qualified name"): `[DNS_SUBDOMAIN "/"] NAME`, NAME at most 63 bytes.
pub(super) fn key_errors(key: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let name = match key.split('/').collect::<Vec<_>>()[..] {
        [name] => name,
        ["", name] => {
            errors.push("prefix part must be non-empty".to_string());
            name
        }
        [prefix, name] => {
            errors.extend(
                subdomain_errors(prefix)
                    .into_iter()
                    .map(|e| format!("prefix part {e}")),
            );
            name
        }
        _ => {
            let regex = regex_error(
                &format!("a valid label key {NAME_MSG}"),
                NAME_FMT,
                &NAME_EXAMPLES,
            );
            let with = "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
            return vec![format!("{regex} {with}")];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errors.push("name part must be no more than 63 bytes".to_string());
    }
    if !is_name(name) {
        errors.push(format!(
            "name part {}",
            regex_error(NAME_MSG, NAME_FMT, &NAME_EXAMPLES)
        ));
    }
    errors
}

/// Upstream `IsLabelValue`: empty, or a name of at most 63 bytes.
pub(super) fn value_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push("must be no more than 63 bytes".to_string());
    }
    if !value.is_empty() && !is_name(value) {
        errors.push(regex_error(
            VALUE_MSG,
            VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errors
}

/// Upstream `IsDNS1123Subdomain`: dot-separated lowercase DNS labels, at most 253 bytes.
pub(super) fn subdomain_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push("must be no more than 253 bytes".to_string());
    }
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let inner = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    let is_label =
        |l: &str| edge(l.chars().next()) && edge(l.chars().last()) && l.chars().all(inner);
    if !value.split('.').all(is_label) {
        errors.push(regex_error(SUBDOMAIN_MSG, SUBDOMAIN_FMT, &["example.com"]));
    }
    errors
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
pub(super) fn is_name(value: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let inner = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    edge(value.chars().next()) && edge(value.chars().last()) && value.chars().all(inner)
}

/// Upstream `RegexError`, including its double spaces (`'MyName',  or 'my.name', ...`).
pub(super) fn regex_error(msg: &str, regex: &str, examples: &[&str]) -> String {
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{regex}')",
        examples.join(" or ")
    )
}

/// A `field.Invalid` error for a string value, if there are problems with it.
pub(super) fn field_error(path: &str, value: &str, problems: &[String]) -> Option<String> {
    let detail = problems.join("; ");
    (!problems.is_empty()).then(|| invalid(path, &format!("{value:?}"), &detail))
}

/// `field.Invalid(...).Error()`: `<path>: Invalid value: <value>: <detail>`.
pub(super) fn invalid(path: &str, rendered_value: &str, detail: &str) -> String {
    format!("{path}: Invalid value: {rendered_value}: {detail}")
}

/// `ErrorList.ToAggregate().Error()`: duplicates dropped, several errors in brackets.
pub(super) fn aggregate(mut errors: Vec<String>) -> String {
    let mut seen = BTreeSet::new();
    errors.retain(|e| seen.insert(e.clone()));
    match &errors[..] {
        [single] => single.clone(),
        _ => format!("[{}]", errors.join(", ")),
    }
}

/// A value list as Go's `json.Marshal` prints it in errors (`null` when there are none).
pub(super) fn json_list(values: &[String]) -> String {
    if values.is_empty() {
        return "null".to_string();
    }
    Value::from(values.to_vec()).to_string()
}
