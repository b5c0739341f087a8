//! The checks pkg/apis/flowcontrol/validation makes of a FlowSchema: the
//! precedence, the distinguisher, the priority level it names, and each rule's
//! subjects and resource or non-resource rules, where `*` stands alone.

use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1123_label_errors, dns1123_subdomain_errors,
};

use super::super::flowschema::{
    FlowSchema, FlowSchemaStatus, NonResourcePolicyRule, PolicyRulesWithSubjects,
    ResourcePolicyRule, ServiceAccountSubject, Subject,
};
use super::mandatory;
use crate::validation::{GoStrings, Raw};

/// The highest matching precedence a schema may have.
const MAX_MATCHING_PRECEDENCE: i32 = 10_000;

/// The verbs a rule may name, sorted as upstream lists them.
const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
];

/// The `FlowSchema` hook (`ValidateFlowSchema` without the metadata, which the
/// server checks): the spec, the fixed spec of the mandatory `exempt` and
/// `catch-all` schemas, and the status conditions.
pub(crate) fn validate_flow_schema(schema: &FlowSchema, path: &FieldPath, errs: &mut FieldErrors) {
    let name = schema.metadata.name.as_deref().unwrap_or_default();
    let spec = &schema.spec;
    let spec_path = path.child("spec");
    let precedence_path = spec_path.child("matchingPrecedence");
    let precedence = spec.matching_precedence;
    if precedence <= 0 {
        errs.invalid(
            precedence_path.clone(),
            precedence,
            "must be a positive value",
        );
    }
    if precedence > MAX_MATCHING_PRECEDENCE {
        let detail = format!("must not be greater than {MAX_MATCHING_PRECEDENCE}");
        errs.invalid(precedence_path.clone(), precedence, &detail);
    }
    if precedence == 1 && name != "exempt" {
        let detail = "only the schema named 'exempt' may have matchingPrecedence 1";
        errs.invalid(precedence_path, precedence, detail);
    }
    if let Some(method) = &spec.distinguisher_method
        && !matches!(method.type_.as_str(), "ByNamespace" | "ByUser")
    {
        // Upstream reports the whole method, as Go prints the struct.
        let value = format!(
            "flowcontrol.FlowDistinguisherMethod{{Type:{:?}}}",
            method.type_
        );
        errs.not_supported_value(
            spec_path.child("distinguisherMethod").child("type"),
            Raw(&value),
            &["ByNamespace", "ByUser"],
        );
    }
    let level = &spec.priority_level_configuration.name;
    let level_path = spec_path.child("priorityLevelConfiguration").child("name");
    if level.is_empty() {
        errs.required(level_path, "must reference a priority level");
    } else {
        for detail in dns1123_subdomain_errors(level) {
            errs.invalid(level_path.clone(), level.as_str(), &detail);
        }
    }
    for (i, rule) in spec.rules.iter().flatten().enumerate() {
        validate_rule(rule, &spec_path.child("rules").index(i), errs);
    }
    mandatory::check_flow_schema(name, spec, &spec_path, errs);
    validate_flow_schema_status(&schema.status, &path.child("status"), errs);
}

/// `ValidateFlowSchemaStatus`: condition types are set and not repeated.
pub(crate) fn validate_flow_schema_status(
    status: &FlowSchemaStatus,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let types = status
        .conditions
        .iter()
        .flatten()
        .map(|c| c.type_.as_deref());
    condition_types(types, &path.child("conditions"), errs);
}

/// The condition checks both flowcontrol kinds share: each type is set
/// (`must not be empty`) and appears once.
pub(super) fn condition_types<'a>(
    types: impl Iterator<Item = Option<&'a str>>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let mut seen = std::collections::BTreeSet::new();
    for (i, kind) in types.enumerate() {
        let kind = kind.unwrap_or_default();
        let type_path = path.index(i).child("type");
        if !seen.insert(kind) {
            errs.duplicate(type_path.clone(), kind);
        }
        if kind.is_empty() {
            errs.required(type_path, "must not be empty");
        }
    }
}

/// `ValidateFlowSchemaPolicyRulesWithSubjects`: at least one subject, and at
/// least one resource or non-resource rule.
fn validate_rule(rule: &PolicyRulesWithSubjects, path: &FieldPath, errs: &mut FieldErrors) {
    if rule.subjects.is_empty() {
        errs.required(
            path.child("subjects"),
            "subjects must contain at least one value",
        );
    }
    for (i, subject) in rule.subjects.iter().enumerate() {
        validate_subject(subject, &path.child("subjects").index(i), errs);
    }
    let resource_rules = rule.resource_rules.as_deref().unwrap_or_default();
    let non_resource_rules = rule.non_resource_rules.as_deref().unwrap_or_default();
    if resource_rules.is_empty() && non_resource_rules.is_empty() {
        errs.required(
            path.clone(),
            "at least one of resourceRules and nonResourceRules has to be non-empty",
        );
    }
    for (i, resource_rule) in resource_rules.iter().enumerate() {
        validate_resource_rule(resource_rule, &path.child("resourceRules").index(i), errs);
    }
    for (i, non_resource_rule) in non_resource_rules.iter().enumerate() {
        let rule_path = path.child("nonResourceRules").index(i);
        validate_non_resource_rule(non_resource_rule, &rule_path, errs);
    }
}

/// `ValidateFlowSchemaSubject`: the member that `kind` names is set and
/// valid, and the other two are absent.
fn validate_subject(subject: &Subject, path: &FieldPath, errs: &mut FieldErrors) {
    let (user, group, account) = (
        subject.user.is_some(),
        subject.group.is_some(),
        subject.service_account.is_some(),
    );
    let forbid = |errs: &mut FieldErrors, member: &str, kind: &str| {
        let detail = format!("{member} is forbidden when subject kind is not '{kind}'");
        errs.forbidden(path.child(member), &detail);
    };
    let require = |errs: &mut FieldErrors, member: &str, kind: &str| {
        let detail = format!("{member} is required when subject kind is '{kind}'");
        errs.required(path.child(member), &detail);
    };
    match subject.kind.as_str() {
        "ServiceAccount" => {
            match &subject.service_account {
                None => require(errs, "serviceAccount", "ServiceAccount"),
                Some(account) => {
                    validate_service_account(account, &path.child("serviceAccount"), errs);
                }
            }
            if user {
                forbid(errs, "user", "User");
            }
            if group {
                forbid(errs, "group", "Group");
            }
        }
        "User" => {
            match &subject.user {
                None => require(errs, "user", "User"),
                Some(u) if u.name.is_empty() => errs.required(path.child("user").child("name"), ""),
                Some(_) => {}
            }
            if account {
                forbid(errs, "serviceAccount", "ServiceAccount");
            }
            if group {
                forbid(errs, "group", "Group");
            }
        }
        "Group" => {
            match &subject.group {
                None => require(errs, "group", "Group"),
                Some(g) if g.name.is_empty() => {
                    errs.required(path.child("group").child("name"), "");
                }
                Some(_) => {}
            }
            if account {
                forbid(errs, "serviceAccount", "ServiceAccount");
            }
            if user {
                forbid(errs, "user", "User");
            }
        }
        other => errs.not_supported(
            path.child("kind"),
            other,
            &["Group", "ServiceAccount", "User"],
        ),
    }
}

/// `ValidateServiceAccountSubject` of a subject that has one: a namespace,
/// and a name that is `*` or a DNS subdomain.
fn validate_service_account(
    account: &ServiceAccountSubject,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let name_path = path.child("name");
    if account.name.is_empty() {
        errs.required(name_path, "");
    } else if account.name != "*" {
        for detail in dns1123_subdomain_errors(&account.name) {
            errs.invalid(name_path.clone(), account.name.as_str(), &detail);
        }
    }
    let namespace_path = path.child("namespace");
    if account.namespace.is_empty() {
        let detail = "must specify namespace for service account";
        errs.required(namespace_path, detail);
    } else {
        for detail in dns1123_label_errors(&account.namespace) {
            errs.invalid(namespace_path.clone(), account.namespace.as_str(), &detail);
        }
    }
}

/// Whether a list holds the `*` wildcard.
fn has_wildcard(items: &[String]) -> bool {
    items.iter().any(|i| i == "*")
}

/// The verbs of either kind of rule: at least one; `*` alone, or only known
/// verbs (all of them reported at once when one is not).
fn validate_verbs(verbs: &[String], path: FieldPath, errs: &mut FieldErrors) {
    if verbs.is_empty() {
        errs.required(path, "verbs must contain at least one value");
    } else if has_wildcard(verbs) {
        if verbs.len() > 1 {
            let detail = "if '*' is present, must not specify other verbs";
            errs.invalid(path, GoStrings(Some(verbs)), detail);
        }
    } else if verbs.iter().any(|v| !VERBS.contains(&v.as_str())) {
        errs.not_supported_value(path, GoStrings(Some(verbs)), VERBS);
    }
}

/// A list that must not be empty and where `*` stands alone (`what` names
/// the members in the message).
fn wildcard_list(items: &[String], what: &str, path: FieldPath, errs: &mut FieldErrors) {
    if items.is_empty() {
        let detail = format!("resource rules must supply at least one {what}");
        errs.required(path, &detail);
    } else if items.len() > 1 && has_wildcard(items) {
        let detail = format!("if '*' is present, must not specify other {what}s");
        errs.invalid(path, GoStrings(Some(items)), &detail);
    }
}

/// `ValidateFlowSchemaResourcePolicyRule`.
fn validate_resource_rule(rule: &ResourcePolicyRule, path: &FieldPath, errs: &mut FieldErrors) {
    validate_verbs(&rule.verbs, path.child("verbs"), errs);
    wildcard_list(&rule.api_groups, "api group", path.child("apiGroups"), errs);
    wildcard_list(&rule.resources, "resource", path.child("resources"), errs);
    let namespaces = rule.namespaces.as_deref().unwrap_or_default();
    let namespaces_path = path.child("namespaces");
    if namespaces.is_empty() && !rule.cluster_scope.unwrap_or_default() {
        let detail =
            "resource rules that are not cluster scoped must supply at least one namespace";
        errs.required(namespaces_path, detail);
    } else if has_wildcard(namespaces) {
        if namespaces.len() > 1 {
            let detail = "if '*' is present, must not specify other namespaces";
            errs.invalid(namespaces_path, GoStrings(Some(namespaces)), detail);
        }
    } else {
        for (i, namespace) in namespaces.iter().enumerate() {
            for detail in dns1123_label_errors(namespace) {
                let detail =
                    format!("each member of this list must be '*' or a DNS-1123 label; {detail}");
                errs.invalid(namespaces_path.index(i), namespace.as_str(), &detail);
            }
        }
    }
}

/// `ValidateFlowSchemaNonResourcePolicyRule`.
fn validate_non_resource_rule(
    rule: &NonResourcePolicyRule,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    validate_verbs(&rule.verbs, path.child("verbs"), errs);
    let urls = &rule.non_resource_urls;
    let urls_path = path.child("nonResourceURLs");
    if urls.is_empty() {
        let detail = "nonResourceURLs must contain at least one value";
        errs.required(urls_path, detail);
    } else if has_wildcard(urls) {
        if urls.len() > 1 {
            let detail = "if '*' is present, must not specify other non-resource URLs";
            errs.invalid(urls_path, GoStrings(Some(urls)), detail);
        }
    } else {
        for (i, url) in urls.iter().enumerate() {
            if let Some(detail) = non_resource_url_error(url) {
                errs.invalid(urls_path.index(i), url.as_str(), detail);
            }
        }
    }
}

/// `ValidateNonResourceURLPath`: `/`, or a path from the root without spaces
/// or empty segments, where one `*` may only end it as `/*`.
fn non_resource_url_error(url: &str) -> Option<&'static str> {
    if url.is_empty() {
        return Some("must not be empty");
    }
    if url == "/" {
        return None;
    }
    if !url.starts_with('/') {
        return Some("must start with slash");
    }
    if url.contains(' ') {
        return Some("must not contain white-space");
    }
    if url.contains("//") {
        return Some("must not contain double slash");
    }
    let stars = url.matches('*').count();
    if stars > 1 || (stars == 1 && !url.ends_with("/*")) {
        return Some("wildcard can only do suffix matching");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::non_resource_url_error;

    #[test]
    fn non_resource_urls() {
        assert_eq!(non_resource_url_error("/"), None);
        assert_eq!(non_resource_url_error("/apis/*"), None);
        assert_eq!(non_resource_url_error("/*"), None);
        assert_eq!(
            non_resource_url_error("/a*"),
            Some("wildcard can only do suffix matching")
        );
    }
}
