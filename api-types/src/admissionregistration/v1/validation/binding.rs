//! `ValidateValidatingAdmissionPolicyBinding`: the policy's name, the
//! parameter reference, the resources matched and the validation actions.
//! kube-apiserver also authorizes the parameter reference of a binding that
//! is otherwise valid; kapi does not.

use std::collections::BTreeSet;

use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::super::validatingadmissionpolicybinding::{ParamRef, ValidatingAdmissionPolicyBinding};
use super::rules::{GoTyped, validate_match_resources};
use crate::validation::{dns1123_subdomain, path_segment_name, validate_label_selector};

/// The validation actions, sorted as upstream lists them.
const ACTIONS: &[&str] = &["Audit", "Deny", "Warn"];
/// The `parameterNotFoundAction` values, in upstream's order.
const NOT_FOUND_ACTIONS: &[&str] = &["Deny", "Allow"];
/// Why a binding must not both name and select its parameters.
const EXCLUSIVE: &str = "name and selector are mutually exclusive";

/// The `ValidatingAdmissionPolicyBinding` hook (create and update alike).
pub(crate) fn validate_binding(
    binding: &ValidatingAdmissionPolicyBinding,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let spec = &binding.spec;
    let path = path.child("spec");
    let policy_name = spec.policy_name.as_deref().unwrap_or_default();
    if policy_name.is_empty() {
        errs.required(path.child("policyName"), "");
    } else {
        dns1123_subdomain(policy_name, &path.child("policyName"), errs);
    }
    if let Some(param_ref) = &spec.param_ref {
        validate_param_ref(param_ref, &path.child("paramRef"), errs);
    }
    if let Some(resources) = &spec.match_resources {
        validate_match_resources(resources, &path.child("matchResources"), errs);
    }
    let actions = spec.validation_actions.as_deref().unwrap_or_default();
    validate_actions(actions, &path.child("validationActions"), errs);
}

/// `validateParamRef`: a name (a URL path segment) or a selector, not both,
/// and what to do when no parameter is found.
fn validate_param_ref(param_ref: &ParamRef, path: &FieldPath, errs: &mut FieldErrors) {
    let name = param_ref.name.as_deref().unwrap_or_default();
    if !name.is_empty() {
        path_segment_name(name, &path.child("name"), errs);
        if param_ref.selector.is_some() {
            errs.forbidden(path.child("name"), EXCLUSIVE);
        }
    }
    if let Some(selector) = &param_ref.selector {
        validate_label_selector(selector, &path.child("selector"), errs);
        if !name.is_empty() {
            errs.forbidden(path.child("selector"), EXCLUSIVE);
        }
    }
    if name.is_empty() && param_ref.selector.is_none() {
        errs.required(path.clone(), "one of name or selector must be specified");
    }
    let action_path = path.child("parameterNotFoundAction");
    match param_ref.parameter_not_found_action.as_deref() {
        None | Some("") => errs.required(action_path, ""),
        Some(action) if !NOT_FOUND_ACTIONS.contains(&action) => {
            errs.not_supported(action_path, action, NOT_FOUND_ACTIONS)
        }
        Some(_) => {}
    }
}

/// `validateValidationActions`: known actions, each once, not both `Deny`
/// and `Warn`, and at least one.
fn validate_actions(actions: &[String], path: &FieldPath, errs: &mut FieldErrors) {
    let mut seen = BTreeSet::new();
    for (i, action) in actions.iter().enumerate() {
        if !ACTIONS.contains(&action.as_str()) {
            errs.not_supported(path.index(i), action, ACTIONS);
        }
        if !seen.insert(action.as_str()) {
            errs.duplicate(path.index(i), action.as_str());
        }
    }
    if seen.contains("Deny") && seen.contains("Warn") {
        errs.invalid(
            path.clone(),
            GoTyped("ValidationAction", actions),
            "must not contain both Deny and Warn (repeating the same validation failure \
             information in the API response and headers serves no purpose)",
        );
    }
    if seen.is_empty() {
        errs.required(path.clone(), "at least one validation action is required");
    }
}
