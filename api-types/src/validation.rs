//! Checks that several kinds' validation hooks share, as
//! k8s.io/kubernetes/pkg/apis/core/validation and apimachinery's
//! `metav1validation` define them: label maps, label selectors, quantities and
//! ports. The kinds' own rules live in `<group>/v1/validation.rs`.

use std::collections::BTreeMap;
use std::fmt;

use kapi_runtime::meta::LabelSelector;
use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1123_label_errors, dns1123_subdomain_errors, is_percent,
    label_value_errors, port_name_errors, port_number_errors, qualified_name_errors,
};
use kapi_runtime::{IntOrString, Quantity};

/// A value printed as is in a message (Go prints some typed strings and
/// structs without quotes).
pub(crate) struct Raw<'a>(pub &'a str);

impl fmt::Debug for Raw<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// `ValidateDNS1123Label`: one `Invalid` per problem of `value`.
pub(crate) fn dns1123_label(value: &str, path: &FieldPath, errs: &mut FieldErrors) {
    for detail in dns1123_label_errors(value) {
        errs.invalid(path.clone(), value, &detail);
    }
}

/// A name validated as a DNS subdomain (`ValidateNameFunc` of most kinds).
pub(crate) fn dns1123_subdomain(value: &str, path: &FieldPath, errs: &mut FieldErrors) {
    for detail in dns1123_subdomain_errors(value) {
        errs.invalid(path.clone(), value, &detail);
    }
}

/// `ValidateLabels`: every key a qualified name and every value a label value;
/// the errors point at the map itself, not at the entry.
pub(crate) fn validate_labels(
    labels: Option<&BTreeMap<String, String>>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    for (key, value) in labels.into_iter().flatten() {
        label_name(key, path, errs);
        for detail in label_value_errors(value) {
            errs.invalid(path.clone(), value, &detail);
        }
    }
}

/// `ValidateLabelName`: a qualified name.
pub(crate) fn label_name(key: &str, path: &FieldPath, errs: &mut FieldErrors) {
    for detail in qualified_name_errors(key) {
        errs.invalid(path.clone(), key, &detail);
    }
}

/// `metav1validation.ValidateLabelSelector` with the options the workload
/// kinds use: label syntax of `matchLabels`, operators and values of
/// `matchExpressions`.
pub(crate) fn validate_label_selector(
    selector: &LabelSelector,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    for (i, req) in selector.match_expressions.iter().flatten().enumerate() {
        let req_path = path.child("matchExpressions").index(i);
        // Operator and values are the requirement's own rule (runtime meta);
        // the key's syntax is checked here.
        label_name(&req.key, &req_path.child("key"), errs);
        for (j, value) in req.values.iter().flatten().enumerate() {
            for detail in label_value_errors(value) {
                errs.invalid(req_path.child("values").index(j), value.as_str(), &detail);
            }
        }
    }
    validate_labels(
        selector.match_labels.as_ref(),
        &path.child("matchLabels"),
        errs,
    );
}

/// `ValidatePortNumOrName`: a number in 1-65535 or an IANA service name.
pub(crate) fn port_num_or_name(port: &IntOrString, path: &FieldPath, errs: &mut FieldErrors) {
    match port {
        IntOrString::Int(n) => {
            for detail in port_number_errors(i64::from(*n)) {
                errs.invalid(path.clone(), n, &detail);
            }
        }
        IntOrString::String(name) => {
            for detail in port_name_errors(name) {
                errs.invalid(path.clone(), name.as_str(), &detail);
            }
        }
    }
}

/// `ValidatePositiveIntOrPercent` (apps): a non-negative number or `N%`.
pub(crate) fn int_or_percent(value: &IntOrString, path: &FieldPath, errs: &mut FieldErrors) {
    match value {
        IntOrString::Int(n) if *n < 0 => {
            errs.invalid(path.clone(), n, "must be greater than or equal to 0")
        }
        IntOrString::Int(_) => {}
        IntOrString::String(s) if is_percent(s) => {}
        IntOrString::String(s) => errs.invalid(
            path.clone(),
            s.as_str(),
            "a valid percent string must be a numeric string followed by an ending '%' (e.g. \
             '1%',  or '93%', regex used for validation is '[0-9]+%')",
        ),
    }
}

/// The value of a quantity as a float, good enough to compare two quantities
/// (`None` when the text is not a quantity).
pub(crate) fn quantity_value(quantity: &Quantity) -> Option<f64> {
    let text = quantity.0.as_str();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-')))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let factor = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        exp => {
            let digits = exp.strip_prefix(['e', 'E'])?;
            10f64.powi(digits.parse().ok()?)
        }
    };
    Some(number * factor)
}

/// `ValidateNonnegativeQuantity`.
pub(crate) fn nonnegative_quantity(quantity: &Quantity, path: &FieldPath, errs: &mut FieldErrors) {
    if quantity_value(quantity).is_some_and(|v| v < 0.0) {
        errs.invalid(
            path.clone(),
            quantity.0.as_str(),
            "must be greater than or equal to 0",
        );
    }
}

/// `ValidateNonnegativeField`.
pub(crate) fn nonnegative(value: Option<i64>, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(n) = value
        && n < 0
    {
        errs.invalid(path.clone(), n, "must be greater than or equal to 0");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_compare_by_value() {
        let q = |s: &str| quantity_value(&Quantity(s.to_owned()));
        assert_eq!(q("500m"), Some(0.5));
        assert_eq!(q("1Ki"), Some(1024.0));
        assert_eq!(q("-1Gi"), Some(-1073741824.0));
        assert_eq!(q("2e3"), Some(2000.0));
        assert_eq!(q("lots"), None);
    }
}
