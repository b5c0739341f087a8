//! `ValidateValidatingWebhookConfiguration` and
//! `ValidateMutatingWebhookConfiguration`: each webhook's name, client
//! config, rules, policies, selectors, AdmissionReview versions and match
//! conditions, and names unique in the configuration.
//!
//! Upstream relaxes a few rules on update when the stored object already broke
//! them (side effects, unrecognized review versions, duplicate names, selector
//! values, unchanged match conditions); objects breaking them cannot be
//! written through v1, so the create rules apply to updates as well.

use std::collections::BTreeSet;

use kapi_runtime::meta::LabelSelector;
use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1035_label_errors, dns1123_subdomain_errors, port_number_errors,
};

use super::super::mutatingwebhookconfiguration::MutatingWebhookConfiguration;
use super::super::rule::{MatchCondition, RuleWithOperations};
use super::super::validatingwebhookconfiguration::ValidatingWebhookConfiguration;
use super::super::webhook::{ServiceReference, WebhookClientConfig};
use super::rules::{
    FAILURE_POLICIES, MATCH_POLICIES, validate_match_conditions, validate_rule, validate_selector,
};
use super::url::validate_webhook_url;
use crate::validation::GoStrings;

/// The side effects a webhook may declare (only those safe for dry runs).
const SIDE_EFFECTS: &[&str] = &["None", "NoneOnDryRun"];
/// The `reinvocationPolicy` values of a mutating webhook.
const REINVOCATION_POLICIES: &[&str] = &["IfNeeded", "Never"];
/// AdmissionReview versions this server (and the one before it) speaks.
const REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];

/// The fields both webhook kinds share, borrowed.
struct Webhook<'a> {
    name: &'a str,
    client_config: &'a WebhookClientConfig,
    rules: Option<&'a [RuleWithOperations]>,
    failure_policy: Option<&'a str>,
    match_policy: Option<&'a str>,
    namespace_selector: Option<&'a LabelSelector>,
    object_selector: Option<&'a LabelSelector>,
    side_effects: Option<&'a str>,
    timeout_seconds: Option<i32>,
    admission_review_versions: &'a [String],
    match_conditions: Option<&'a [MatchCondition]>,
}

/// The [`Webhook`] view of a webhook of either configuration (their types
/// share every field but the mutating one's reinvocation policy).
macro_rules! webhook_view {
    ($h:expr) => {
        Webhook {
            name: &$h.name,
            client_config: &$h.client_config,
            rules: $h.rules.as_deref(),
            failure_policy: $h.failure_policy.as_deref(),
            match_policy: $h.match_policy.as_deref(),
            namespace_selector: $h.namespace_selector.as_ref(),
            object_selector: $h.object_selector.as_ref(),
            side_effects: $h.side_effects.as_deref(),
            timeout_seconds: $h.timeout_seconds,
            admission_review_versions: &$h.admission_review_versions,
            match_conditions: $h.match_conditions.as_deref(),
        }
    };
}

/// The `ValidatingWebhookConfiguration` hook.
pub(crate) fn validate_validating_configuration(
    config: &ValidatingWebhookConfiguration,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let hooks = config.webhooks.as_deref().unwrap_or_default();
    let views = hooks.iter().map(|h| webhook_view!(h));
    validate_webhooks(views, &path.child("webhooks"), errs, |_, _, _| {});
}

/// The `MutatingWebhookConfiguration` hook: as for validating webhooks, plus
/// the reinvocation policy.
pub(crate) fn validate_mutating_configuration(
    config: &MutatingWebhookConfiguration,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let hooks = config.webhooks.as_deref().unwrap_or_default();
    let views = hooks.iter().map(|h| webhook_view!(h));
    validate_webhooks(views, &path.child("webhooks"), errs, |i, path, errs| {
        if let Some(policy) = hooks.get(i).and_then(|h| h.reinvocation_policy.as_deref())
            && !REINVOCATION_POLICIES.contains(&policy)
        {
            errs.not_supported(
                path.child("reinvocationPolicy"),
                policy,
                REINVOCATION_POLICIES,
            );
        }
    });
}

/// Every webhook of a configuration, `extra` adding a kind's own checks of
/// webhook `i`, and the duplicate names.
fn validate_webhooks<'a>(
    hooks: impl Iterator<Item = Webhook<'a>>,
    path: &FieldPath,
    errs: &mut FieldErrors,
    extra: impl Fn(usize, &FieldPath, &mut FieldErrors),
) {
    let mut names = BTreeSet::new();
    for (i, hook) in hooks.enumerate() {
        let hook_path = path.index(i);
        validate_webhook(&hook, &hook_path, errs);
        extra(i, &hook_path, errs);
        validate_review_versions(
            hook.admission_review_versions,
            &hook_path.child("admissionReviewVersions"),
            errs,
        );
        if !hook.name.is_empty() && !names.insert(hook.name) {
            errs.duplicate(hook_path.child("name"), hook.name);
        }
    }
}

/// `validateValidatingWebhook` / `validateMutatingWebhook` without the
/// reinvocation policy.
fn validate_webhook(hook: &Webhook<'_>, path: &FieldPath, errs: &mut FieldErrors) {
    fully_qualified_name(hook.name, &path.child("name"), errs);
    for (i, rule) in hook.rules.unwrap_or_default().iter().enumerate() {
        validate_rule(rule, &path.child("rules").index(i), errs);
    }
    if let Some(policy) = hook.failure_policy
        && !FAILURE_POLICIES.contains(&policy)
    {
        errs.not_supported(path.child("failurePolicy"), policy, FAILURE_POLICIES);
    }
    if let Some(policy) = hook.match_policy
        && !MATCH_POLICIES.contains(&policy)
    {
        errs.not_supported(path.child("matchPolicy"), policy, MATCH_POLICIES);
    }
    match hook.side_effects {
        None => errs.required(
            path.child("sideEffects"),
            &format!("must specify one of {}", SIDE_EFFECTS.join(", ")),
        ),
        Some(effects) if !SIDE_EFFECTS.contains(&effects) => {
            errs.not_supported(path.child("sideEffects"), effects, SIDE_EFFECTS)
        }
        Some(_) => {}
    }
    if let Some(timeout) = hook.timeout_seconds
        && !(1..=30).contains(&timeout)
    {
        errs.invalid(
            path.child("timeoutSeconds"),
            timeout,
            "the timeout value must be between 1 and 30 seconds",
        );
    }
    validate_selector(
        hook.namespace_selector,
        &path.child("namespaceSelector"),
        errs,
    );
    validate_selector(hook.object_selector, &path.child("objectSelector"), errs);
    validate_client_config(hook.client_config, &path.child("clientConfig"), errs);
    validate_match_conditions(hook.match_conditions, &path.child("matchConditions"), errs);
}

/// `IsFullyQualifiedName`: a DNS subdomain of at least three labels.
fn fully_qualified_name(name: &str, path: &FieldPath, errs: &mut FieldErrors) {
    if name.is_empty() {
        errs.required(path.clone(), "");
        return;
    }
    let problems = dns1123_subdomain_errors(name);
    if !problems.is_empty() {
        errs.invalid(path.clone(), name, &problems.join(","));
    } else if name.split('.').count() < 3 {
        errs.invalid(
            path.clone(),
            name,
            "should be a domain with at least three segments separated by dots",
        );
    }
}

/// Exactly one of `url` and `service`, each checked on its own.
fn validate_client_config(config: &WebhookClientConfig, path: &FieldPath, errs: &mut FieldErrors) {
    match (&config.url, &config.service) {
        (Some(url), None) => validate_webhook_url(url, &path.child("url"), errs),
        (None, Some(service)) => validate_service(service, &path.child("service"), errs),
        _ => errs.required(path.clone(), "exactly one of url or service is required"),
    }
}

/// `ValidateWebhookService`. kube-apiserver passes the service's name where
/// the namespace is expected and the other way round, so an empty name is
/// reported on `namespace` and an empty namespace on `name`; we keep that.
fn validate_service(service: &ServiceReference, path: &FieldPath, errs: &mut FieldErrors) {
    if service.namespace.is_empty() {
        errs.required(path.child("name"), "service name is required");
    }
    if service.name.is_empty() {
        errs.required(path.child("namespace"), "service namespace is required");
    }
    let port = service.port.unwrap_or(443);
    let problems = port_number_errors(i64::from(port));
    if !problems.is_empty() {
        let detail = format!("port is not valid: {}", problems.join(", "));
        errs.invalid(path.child("port"), port, &detail);
    }
    if let Some(url_path) = &service.path {
        validate_service_path(url_path, &path.child("path"), errs);
    }
}

/// The service's URL path: `/` or empty, or `/`-separated DNS subdomains
/// (a trailing `/` allowed).
fn validate_service_path(url_path: &str, path: &FieldPath, errs: &mut FieldErrors) {
    if url_path.is_empty() || url_path == "/" {
        return;
    }
    if url_path == "//" {
        errs.invalid(path.clone(), url_path, "segment[0] may not be empty");
        return;
    }
    if !url_path.starts_with('/') {
        errs.invalid(path.clone(), url_path, "must start with a '/'");
    }
    // Upstream drops the first byte whether or not it is the slash.
    let rest = url_path.get(1..).unwrap_or_default();
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    for (i, segment) in rest.split('/').enumerate() {
        if segment.is_empty() {
            let detail = format!("segment[{i}] may not be empty");
            errs.invalid(path.clone(), url_path, &detail);
            continue;
        }
        for problem in dns1123_subdomain_errors(segment) {
            errs.invalid(path.clone(), url_path, &format!("segment[{i}]: {problem}"));
        }
    }
}

/// `validateAdmissionReviewVersions`: at least one, no repeats, each a DNS
/// label, and one this server speaks.
fn validate_review_versions(versions: &[String], path: &FieldPath, errs: &mut FieldErrors) {
    if versions.is_empty() {
        let detail = format!("must specify one of {}", REVIEW_VERSIONS.join(", "));
        errs.required(path.clone(), &detail);
        return;
    }
    let mut seen = BTreeSet::new();
    for (i, version) in versions.iter().enumerate() {
        if !seen.insert(version.as_str()) {
            errs.invalid(path.index(i), version.as_str(), "duplicate version");
            continue;
        }
        for problem in dns1035_label_errors(version) {
            errs.invalid(path.index(i), version.as_str(), &problem);
        }
    }
    if !versions
        .iter()
        .any(|v| REVIEW_VERSIONS.contains(&v.as_str()))
    {
        let detail = format!(
            "must include at least one of {}",
            REVIEW_VERSIONS.join(", ")
        );
        errs.invalid(path.clone(), GoStrings(Some(versions)), &detail);
    }
}
