//! The checks webhooks and policies share: rules over operations and
//! resources, the resources a policy matches, and CEL match conditions
//! (whose expressions are only checked for presence: kapi compiles no CEL).

use std::collections::BTreeSet;
use std::fmt;

use kapi_runtime::meta::LabelSelector;
use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::super::rule::{
    MatchCondition, MatchResources, NamedRuleWithOperations, RuleWithOperations,
};
use crate::validation::{GoStrings, path_segment_name, validate_label_selector};

/// Operations a rule may name, sorted as upstream lists them.
const OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
/// Scopes a rule may name.
const SCOPES: &[&str] = &["*", "Cluster", "Namespaced"];
/// `failurePolicy` values.
pub(super) const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
/// `matchPolicy` values.
pub(super) const MATCH_POLICIES: &[&str] = &["Equivalent", "Exact"];
/// The most match conditions a webhook or policy may have.
const MAX_MATCH_CONDITIONS: usize = 64;

/// A list of a typed string as Go's `%#v` prints it, e.g.
/// `[]admissionregistration.OperationType{"*", "CREATE"}`.
pub(super) struct GoTyped<'a>(pub &'static str, pub &'a [String]);

impl fmt::Debug for GoTyped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self.1.iter().map(|s| format!("{s:?}")).collect();
        write!(
            f,
            "[]admissionregistration.{}{{{}}}",
            self.0,
            items.join(", ")
        )
    }
}

/// `validateRuleWithOperations`: at least one supported operation (`*` alone),
/// then the rule's groups, versions, resources and scope at the same level.
pub(super) fn validate_rule(rule: &RuleWithOperations, path: &FieldPath, errs: &mut FieldErrors) {
    let operations = rule.operations.as_deref().unwrap_or_default();
    let ops_path = path.child("operations");
    if operations.is_empty() {
        errs.required(ops_path.clone(), "");
    }
    if operations.len() > 1 && operations.iter().any(|o| o == "*") {
        errs.invalid(
            ops_path.clone(),
            GoTyped("OperationType", operations),
            "if '*' is present, must not specify other operations",
        );
    }
    for (i, op) in operations.iter().enumerate() {
        if !OPERATIONS.contains(&op.as_str()) {
            errs.not_supported(ops_path.index(i), op, OPERATIONS);
        }
    }
    let groups = rule.api_groups.as_deref().unwrap_or_default();
    wildcard_list(groups, "API groups", &path.child("apiGroups"), errs);
    let versions = rule.api_versions.as_deref().unwrap_or_default();
    let versions_path = path.child("apiVersions");
    wildcard_list(versions, "API versions", &versions_path, errs);
    for (i, version) in versions.iter().enumerate() {
        if version.is_empty() {
            errs.required(versions_path.index(i), "");
        }
    }
    let resources = rule.resources.as_deref().unwrap_or_default();
    validate_resources(resources, &path.child("resources"), errs);
    if let Some(scope) = &rule.scope
        && !SCOPES.contains(&scope.as_str())
    {
        errs.not_supported(path.child("scope"), scope, SCOPES);
    }
}

/// A list that must not be empty, where `*` stands alone.
fn wildcard_list(items: &[String], what: &str, path: &FieldPath, errs: &mut FieldErrors) {
    if items.is_empty() {
        errs.required(path.clone(), "");
    }
    if items.len() > 1 && items.iter().any(|g| g == "*") {
        errs.invalid(
            path.clone(),
            GoStrings(Some(items)),
            &format!("if '*' is present, must not specify other {what}"),
        );
    }
}

/// `validateResources`: `resource` or `resource/subresource`, where `x/*`
/// and `*/x` cover the entries after them, `*/*` stands alone and `*`
/// excludes other resources without a subresource.
fn validate_resources(resources: &[String], path: &FieldPath, errs: &mut FieldErrors) {
    if resources.is_empty() {
        errs.required(path.clone(), "");
    }
    let mut all_subresources_of = BTreeSet::new();
    let mut all_resources_with = BTreeSet::new();
    let mut has_plain = false;
    for (i, entry) in resources.iter().enumerate() {
        if entry.is_empty() {
            errs.required(path.index(i), "");
            continue;
        }
        let Some((res, sub)) = entry.split_once('/') else {
            // As upstream, only the last plain entry counts.
            has_plain = entry != "*";
            continue;
        };
        if all_subresources_of.contains(res) {
            let detail = format!("if '{res}/*' is present, must not specify {entry}");
            errs.invalid(path.index(i), entry.as_str(), &detail);
        }
        if all_resources_with.contains(sub) {
            let detail = format!("if '*/{sub}' is present, must not specify {entry}");
            errs.invalid(path.index(i), entry.as_str(), &detail);
        }
        if sub == "*" {
            all_subresources_of.insert(res);
        }
        if res == "*" {
            all_resources_with.insert(sub);
        }
    }
    if resources.len() > 1 && resources.iter().any(|r| r == "*/*") {
        errs.invalid(
            path.clone(),
            GoStrings(Some(resources)),
            "if '*/*' is present, must not specify other resources",
        );
    }
    if has_plain && resources.iter().any(|r| r == "*") {
        errs.invalid(
            path.clone(),
            GoStrings(Some(resources)),
            "if '*' is present, must not specify other resources without subresources",
        );
    }
}

/// `validateNamedRuleWithOperations`: unique names that can be URL path
/// segments, then the rule.
fn validate_named_rule(rule: &NamedRuleWithOperations, path: &FieldPath, errs: &mut FieldErrors) {
    let mut seen = BTreeSet::new();
    let names_path = path.child("resourceNames");
    for (i, name) in rule.resource_names.iter().flatten().enumerate() {
        path_segment_name(name, &names_path.index(i), errs);
        if !seen.insert(name.as_str()) {
            errs.duplicate(names_path.index(i), name.as_str());
        }
    }
    validate_rule(&rule.rule_with_operations, path, errs);
}

/// `validateMatchResources`: a supported match policy, both selectors (set
/// by defaulting) and every rule.
pub(super) fn validate_match_resources(
    resources: &MatchResources,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    match &resources.match_policy {
        None => errs.required(path.child("matchPolicy"), ""),
        Some(policy) if !MATCH_POLICIES.contains(&policy.as_str()) => {
            errs.not_supported(path.child("matchPolicy"), policy, MATCH_POLICIES)
        }
        Some(_) => {}
    }
    let selectors = [
        ("namespaceSelector", &resources.namespace_selector),
        ("objectSelector", &resources.object_selector),
    ];
    for (field, selector) in selectors {
        match selector {
            None => errs.required(path.child(field), ""),
            Some(selector) => validate_label_selector(selector, &path.child(field), errs),
        }
    }
    let lists = [
        ("resourceRules", &resources.resource_rules),
        ("excludeResourceRules", &resources.exclude_resource_rules),
    ];
    for (field, rules) in lists {
        for (i, rule) in rules.iter().flatten().enumerate() {
            validate_named_rule(rule, &path.child(field).index(i), errs);
        }
    }
}

/// A webhook's selector, when set (the `LabelSelectorRequirement` type checks
/// operators and values itself).
pub(super) fn validate_selector(
    selector: Option<&LabelSelector>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if let Some(selector) = selector {
        validate_label_selector(selector, path, errs);
    }
}

/// `validateMatchConditions` without compiling the expressions: at most 64,
/// each named with a unique qualified name and holding a non-blank
/// expression.
pub(super) fn validate_match_conditions(
    conditions: Option<&[MatchCondition]>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let conditions = conditions.unwrap_or_default();
    if conditions.len() > MAX_MATCH_CONDITIONS {
        errs.too_many(path.clone(), conditions.len(), MAX_MATCH_CONDITIONS);
    }
    let mut names = BTreeSet::new();
    for (i, condition) in conditions.iter().enumerate() {
        let item = path.index(i);
        if condition.expression.trim().is_empty() {
            errs.required(item.child("expression"), "");
        }
        if condition.name.is_empty() {
            errs.required(item.child("name"), "");
        } else {
            crate::validation::label_name(&condition.name, &item.child("name"), errs);
            if !names.insert(condition.name.as_str()) {
                errs.duplicate(item.child("name"), condition.name.as_str());
            }
        }
    }
}
