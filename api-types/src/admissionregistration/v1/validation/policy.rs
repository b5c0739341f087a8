//! `ValidateValidatingAdmissionPolicy` without CEL: the failure policy, the
//! parameter kind, the match constraints and conditions, and the shape of
//! the variables, validations and audit annotations. kapi compiles no CEL,
//! so expressions are only checked for presence (and length), never parsed
//! or type-checked.

use std::collections::BTreeSet;
use std::fmt;

use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1035_label_errors, dns1123_subdomain_errors,
};

use super::super::validatingadmissionpolicy::{
    AuditAnnotation, ParamKind, ValidatingAdmissionPolicy, ValidatingAdmissionPolicySpec,
    Validation, Variable,
};
use super::rules::{FAILURE_POLICIES, validate_match_conditions, validate_match_resources};
use crate::validation::label_name;

/// The most audit annotations a policy may declare.
const MAX_AUDIT_ANNOTATIONS: usize = 20;
/// The longest audit annotation value expression, in bytes.
const MAX_VALUE_EXPRESSION_LEN: usize = 5 * 1024;
/// The status reasons a failed validation may answer with.
const REASONS: &[&str] = &["Forbidden", "Invalid", "RequestEntityTooLarge"];
/// Words CEL reserves, which cannot name a variable.
const CEL_RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The `ValidatingAdmissionPolicy` hook: the spec (the status is checked
/// only on its own subresource).
pub(crate) fn validate_policy(
    policy: &ValidatingAdmissionPolicy,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let name = policy.metadata.name.as_deref().unwrap_or_default();
    validate_spec(&policy.spec, name, &path.child("spec"), errs);
}

/// `validateValidatingAdmissionPolicySpec`, CEL compilation aside.
fn validate_spec(
    spec: &ValidatingAdmissionPolicySpec,
    name: &str,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    match &spec.failure_policy {
        None => errs.required(path.child("failurePolicy"), ""),
        Some(policy) if !FAILURE_POLICIES.contains(&policy.as_str()) => {
            errs.not_supported(path.child("failurePolicy"), policy, FAILURE_POLICIES)
        }
        Some(_) => {}
    }
    if let Some(kind) = &spec.param_kind {
        validate_param_kind(kind, &path.child("paramKind"), errs);
    }
    match &spec.match_constraints {
        None => errs.required(path.child("matchConstraints"), ""),
        Some(constraints) => {
            let constraints_path = path.child("matchConstraints");
            validate_match_resources(constraints, &constraints_path, errs);
            // The rules give the expressions their types: one is needed.
            if constraints
                .resource_rules
                .as_ref()
                .is_none_or(Vec::is_empty)
            {
                errs.required(constraints_path.child("resourceRules"), "");
            }
        }
    }
    validate_match_conditions(
        spec.match_conditions.as_deref(),
        &path.child("matchConditions"),
        errs,
    );
    for (i, variable) in spec.variables.iter().flatten().enumerate() {
        validate_variable(variable, &path.child("variables").index(i), errs);
    }
    let validations = spec.validations.as_deref().unwrap_or_default();
    let annotations = spec.audit_annotations.as_deref().unwrap_or_default();
    if validations.is_empty() && annotations.is_empty() {
        let detail = "validations or auditAnnotations must contain at least one item";
        errs.required(path.child("validations"), detail);
        errs.required(path.child("auditAnnotations"), detail);
        return;
    }
    for (i, validation) in validations.iter().enumerate() {
        validate_validation(validation, &path.child("validations").index(i), errs);
    }
    let annotations_path = path.child("auditAnnotations");
    if annotations.len() > MAX_AUDIT_ANNOTATIONS {
        errs.invalid(
            annotations_path.clone(),
            GoAnnotations(annotations),
            &format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"),
        );
    }
    let mut keys = BTreeSet::new();
    for (i, annotation) in annotations.iter().enumerate() {
        let item = annotations_path.index(i);
        validate_audit_annotation(annotation, name, &item, errs);
        if !keys.insert(annotation.key.as_str()) {
            errs.duplicate(item.child("key"), annotation.key.as_str());
        }
    }
}

/// `validateParamKind`: `apiVersion` as `[group/]version` (a DNS subdomain
/// and a DNS label) and a kind that is a DNS label once lower-cased.
fn validate_param_kind(kind: &ParamKind, path: &FieldPath, errs: &mut FieldErrors) {
    let version_path = path.child("apiVersion");
    let api_version = kind.api_version.as_deref().unwrap_or_default();
    if api_version.is_empty() {
        errs.required(version_path, "");
    } else if let Some((group, version)) = split_group_version(api_version) {
        let group_problems = dns1123_subdomain_errors(group);
        if !group.is_empty() && !group_problems.is_empty() {
            errs.invalid(version_path.clone(), group, &group_problems.join(","));
        }
        if version.is_empty() {
            errs.invalid(version_path, api_version, "version must be specified");
        } else {
            let problems = dns1035_label_errors(version);
            if !problems.is_empty() {
                errs.invalid(version_path, version, &problems.join(","));
            }
        }
    } else {
        let detail = format!("unexpected GroupVersion string: {api_version}");
        errs.invalid(version_path, api_version, &detail);
    }
    let kind_name = kind.kind.as_deref().unwrap_or_default();
    if kind_name.is_empty() {
        errs.required(path.child("kind"), "");
        return;
    }
    let problems = dns1035_label_errors(&kind_name.to_lowercase());
    if !problems.is_empty() {
        let detail = format!(
            "may have mixed case, but should otherwise match: {}",
            problems.join(",")
        );
        errs.invalid(path.child("kind"), kind_name, &detail);
    }
}

/// `group/version`, or a version alone (the core group); `None` with more
/// than one `/`.
fn split_group_version(api_version: &str) -> Option<(&str, &str)> {
    if api_version == "/" {
        return Some(("", ""));
    }
    match api_version.matches('/').count() {
        0 => Some(("", api_version)),
        1 => api_version.split_once('/'),
        _ => None,
    }
}

/// `validateVariable`: a CEL identifier and an expression.
fn validate_variable(variable: &Variable, path: &FieldPath, errs: &mut FieldErrors) {
    if variable.name.trim().is_empty() {
        errs.required(path.child("name"), "name is not specified");
    } else if !is_cel_identifier(&variable.name) {
        errs.invalid(
            path.child("name"),
            variable.name.as_str(),
            "name is not a valid CEL identifier",
        );
    }
    if variable.expression.trim().is_empty() {
        errs.required(path.child("expression"), "expression is not specified");
    }
}

/// `[_a-zA-Z][_a-zA-Z0-9]*`, not a reserved word.
fn is_cel_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let starts_well = chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic());
    starts_well
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !CEL_RESERVED.contains(&name)
}

/// `validateValidation` without compiling: an expression, a message and a
/// message expression that are not blank when given, a one-line message and
/// a supported reason.
fn validate_validation(validation: &Validation, path: &FieldPath, errs: &mut FieldErrors) {
    if validation.expression.trim().is_empty() {
        errs.required(path.child("expression"), "expression is not specified");
    }
    let message_expression = validation.message_expression.as_deref().unwrap_or_default();
    if !message_expression.is_empty() && message_expression.trim().is_empty() {
        errs.invalid(
            path.child("messageExpression"),
            message_expression,
            "must be non-empty if specified",
        );
    }
    let message = validation.message.as_deref().unwrap_or_default();
    let trimmed = message.trim();
    if !message.is_empty() && trimmed.is_empty() {
        errs.invalid(
            path.child("message"),
            message,
            "message must be non-empty if specified",
        );
    } else if trimmed.contains(['\n', '\r']) {
        errs.invalid(
            path.child("message"),
            message,
            "message must not contain line breaks",
        );
    }
    if let Some(reason) = &validation.reason
        && !REASONS.contains(&reason.as_str())
    {
        errs.not_supported(path.child("reason"), reason, REASONS);
    }
}

/// `validateAuditAnnotation` without compiling: `<policy name>/<key>` must
/// be a qualified name, and the value expression present and at most 5 KiB.
fn validate_audit_annotation(
    annotation: &AuditAnnotation,
    policy_name: &str,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if policy_name.is_empty() {
        errs.invalid(
            path.child("key"),
            annotation.key.as_str(),
            "requires metadata.name be non-empty",
        );
    } else {
        let qualified = format!("{policy_name}/{}", annotation.key);
        label_name(&qualified, &path.child("key"), errs);
    }
    let value = annotation.value_expression.trim();
    if value.is_empty() {
        errs.required(
            path.child("valueExpression"),
            "valueExpression is not specified",
        );
    } else if value.len() > MAX_VALUE_EXPRESSION_LEN {
        errs.required(
            path.child("valueExpression"),
            &format!("must not exceed {MAX_VALUE_EXPRESSION_LEN} bytes in length"),
        );
    }
}

/// The audit annotations as Go's `%#v` prints them.
struct GoAnnotations<'a>(&'a [AuditAnnotation]);

impl fmt::Debug for GoAnnotations<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self
            .0
            .iter()
            .map(|a| {
                format!(
                    "admissionregistration.AuditAnnotation{{Key:{:?}, ValueExpression:{:?}}}",
                    a.key, a.value_expression
                )
            })
            .collect();
        write!(
            f,
            "[]admissionregistration.AuditAnnotation{{{}}}",
            items.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cel_identifiers() {
        assert!(is_cel_identifier("_x1"));
        assert!(!is_cel_identifier("1x"));
        assert!(!is_cel_identifier("in"));
        assert!(!is_cel_identifier("a-b"));
        assert!(!is_cel_identifier(""));
    }
}
