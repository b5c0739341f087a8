//! `validateAffinity`: node selector terms and requirements, pod
//! (anti-)affinity terms and weights; and the label-key lists
//! (`matchLabelKeys`, `mismatchLabelKeys`) that pod affinity terms and topology
//! spread constraints add to their selectors.

use std::collections::BTreeSet;

use kapi_runtime::meta::LabelSelector;
use kapi_runtime::validation::{FieldErrors, FieldPath, dns1123_label_errors};

use crate::core::v1::pod::affinity::{
    Affinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodAffinityTerm,
    WeightedPodAffinityTerm,
};
use crate::validation::{dns1123_subdomain, label_name, validate_label_selector};

/// The `Affinity` hook.
pub(crate) fn validate_affinity(affinity: &Affinity, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(node) = &affinity.node_affinity {
        let node_path = path.child("nodeAffinity");
        if let Some(required) = &node.required_during_scheduling_ignored_during_execution {
            let required_path = node_path.child("requiredDuringSchedulingIgnoredDuringExecution");
            validate_node_selector(required, &required_path, errs);
        }
        let preferred_path = node_path.child("preferredDuringSchedulingIgnoredDuringExecution");
        for (i, term) in node
            .preferred_during_scheduling_ignored_during_execution
            .iter()
            .flatten()
            .enumerate()
        {
            let item = preferred_path.index(i);
            weight(term.weight, &item, errs);
            node_selector_term(&term.preference, &item.child("preference"), errs);
        }
    }
    let pod_terms = [
        (
            "podAffinity",
            affinity.pod_affinity.as_ref().map(|a| {
                (
                    &a.required_during_scheduling_ignored_during_execution,
                    &a.preferred_during_scheduling_ignored_during_execution,
                )
            }),
        ),
        (
            "podAntiAffinity",
            affinity.pod_anti_affinity.as_ref().map(|a| {
                (
                    &a.required_during_scheduling_ignored_during_execution,
                    &a.preferred_during_scheduling_ignored_during_execution,
                )
            }),
        ),
    ];
    for (field, terms) in pod_terms {
        let Some((required, preferred)) = terms else {
            continue;
        };
        let own_path = path.child(field);
        let required_path = own_path.child("requiredDuringSchedulingIgnoredDuringExecution");
        for (i, term) in required.iter().flatten().enumerate() {
            pod_affinity_term(term, &required_path.index(i), errs);
        }
        let preferred_path = own_path.child("preferredDuringSchedulingIgnoredDuringExecution");
        for (i, term) in preferred.iter().flatten().enumerate() {
            weighted_term(term, &preferred_path.index(i), errs);
        }
    }
}

/// Weights of preferences are 1 to 100.
fn weight(value: i32, path: &FieldPath, errs: &mut FieldErrors) {
    if !(1..=100).contains(&value) {
        errs.invalid(path.child("weight"), value, "must be in the range 1-100");
    }
}

/// A weighted pod (anti-)affinity preference.
fn weighted_term(term: &WeightedPodAffinityTerm, path: &FieldPath, errs: &mut FieldErrors) {
    weight(term.weight, path, errs);
    pod_affinity_term(
        &term.pod_affinity_term,
        &path.child("podAffinityTerm"),
        errs,
    );
}

/// `ValidateNodeSelector` (pods and persistent volumes): at least one term,
/// each valid. Label values are not checked: kube-apiserver 1.32 accepts any
/// in node affinity.
pub(crate) fn validate_node_selector(
    selector: &NodeSelector,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let terms_path = path.child("nodeSelectorTerms");
    if selector.node_selector_terms.is_empty() {
        errs.required(terms_path, "must have at least one node selector term");
        return;
    }
    for (i, term) in selector.node_selector_terms.iter().enumerate() {
        node_selector_term(term, &terms_path.index(i), errs);
    }
}

/// `ValidateNodeSelectorTerm`: its label and field requirements.
fn node_selector_term(term: &NodeSelectorTerm, path: &FieldPath, errs: &mut FieldErrors) {
    for (i, req) in term.match_expressions.iter().flatten().enumerate() {
        node_selector_requirement(req, &path.child("matchExpressions").index(i), errs);
    }
    for (i, req) in term.match_fields.iter().flatten().enumerate() {
        node_field_requirement(req, &path.child("matchFields").index(i), errs);
    }
}

/// `ValidateNodeSelectorRequirement`: the values each operator takes, the
/// key's syntax.
fn node_selector_requirement(
    req: &NodeSelectorRequirement,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let values = req.values.as_deref().unwrap_or_default();
    let values_path = path.child("values");
    match req.operator.as_str() {
        "In" | "NotIn" if values.is_empty() => errs.required(
            values_path.clone(),
            "must be specified when `operator` is 'In' or 'NotIn'",
        ),
        "Exists" | "DoesNotExist" if !values.is_empty() => errs.forbidden(
            values_path.clone(),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        "Gt" | "Lt" if values.len() != 1 => errs.required(
            values_path.clone(),
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        ),
        "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
        other => errs.invalid(
            path.child("operator"),
            other,
            "not a valid selector operator",
        ),
    }
    label_name(&req.key, &path.child("key"), errs);
}

/// `ValidateNodeFieldSelectorRequirement`: `metadata.name` with one node
/// name, `In` or `NotIn`.
fn node_field_requirement(req: &NodeSelectorRequirement, path: &FieldPath, errs: &mut FieldErrors) {
    let values = req.values.as_deref().unwrap_or_default();
    match req.operator.as_str() {
        "In" | "NotIn" if values.len() != 1 => errs.required(
            path.child("values"),
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
        ),
        "In" | "NotIn" => {}
        other => errs.invalid(
            path.child("operator"),
            other,
            "not a valid selector operator",
        ),
    }
    if req.key == "metadata.name" {
        for (i, value) in values.iter().enumerate() {
            dns1123_subdomain(value, &path.child("values").index(i), errs);
        }
    } else {
        errs.invalid(
            path.child("key"),
            req.key.as_str(),
            "not a valid field selector key",
        );
    }
}

/// `validatePodAffinityTerm`: the selectors, namespace names (reported under
/// `namespace`, as upstream does), the label-key lists, the topology key.
fn pod_affinity_term(term: &PodAffinityTerm, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(selector) = &term.label_selector {
        validate_label_selector(selector, &path.child("labelSelector"), errs);
    }
    if let Some(selector) = &term.namespace_selector {
        validate_label_selector(selector, &path.child("namespaceSelector"), errs);
    }
    for namespace in term.namespaces.iter().flatten() {
        for detail in dns1123_label_errors(namespace) {
            errs.invalid(path.child("namespace"), namespace.as_str(), &detail);
        }
    }
    let match_keys = term.match_label_keys.as_deref().unwrap_or_default();
    let mismatch_keys = term.mismatch_label_keys.as_deref().unwrap_or_default();
    let selector = term.label_selector.as_ref();
    label_keys(match_keys, selector, &path.child("matchLabelKeys"), errs);
    label_keys(
        mismatch_keys,
        selector,
        &path.child("mismatchLabelKeys"),
        errs,
    );
    if let Some(selector) = selector {
        // A key of `matchLabelKeys` that the selector's expressions repeat
        // (upstream reports it under the term's own path, indexed).
        let mut seen: BTreeSet<&str> = selector
            .match_labels
            .iter()
            .flatten()
            .map(|(k, _)| k.as_str())
            .collect();
        for req in selector.match_expressions.iter().flatten() {
            let key = req.key.as_str();
            if let Some(i) = match_keys.iter().rposition(|k| k == key)
                && seen.contains(key)
            {
                errs.invalid(
                    path.index(i),
                    key,
                    "exists in both matchLabelKeys and labelSelector",
                );
            }
            seen.insert(key);
        }
    }
    for (i, key) in match_keys.iter().enumerate() {
        if mismatch_keys.contains(key) {
            errs.invalid(
                path.child("matchLabelKeys").index(i),
                key.as_str(),
                "exists in both matchLabelKeys and mismatchLabelKeys",
            );
        }
    }
    if term.topology_key.is_empty() {
        errs.required(path.child("topologyKey"), "can not be empty");
    }
    label_name(&term.topology_key, &path.child("topologyKey"), errs);
}

/// `validateLabelKeys`: only with a label selector, each a label name.
fn label_keys(
    keys: &[String],
    selector: Option<&LabelSelector>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if keys.is_empty() {
        return;
    }
    if selector.is_none() {
        errs.forbidden(
            path.clone(),
            "must not be specified when labelSelector is not set",
        );
        return;
    }
    for (i, key) in keys.iter().enumerate() {
        label_name(key, &path.index(i), errs);
    }
}

/// `ValidateMatchLabelKeysInTopologySpread`: only with a label selector, each
/// a label name that the selector does not already use.
pub(super) fn spread_match_label_keys(
    keys: &[String],
    selector: Option<&LabelSelector>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if keys.is_empty() {
        return;
    }
    let mut used = BTreeSet::new();
    match selector {
        Some(selector) => {
            used.extend(
                selector
                    .match_labels
                    .iter()
                    .flatten()
                    .map(|(k, _)| k.as_str()),
            );
            used.extend(
                selector
                    .match_expressions
                    .iter()
                    .flatten()
                    .map(|r| r.key.as_str()),
            );
        }
        None => errs.forbidden(
            path.clone(),
            "must not be specified when labelSelector is not set",
        ),
    }
    for (i, key) in keys.iter().enumerate() {
        label_name(key, &path.index(i), errs);
        if used.contains(key.as_str()) {
            errs.invalid(
                path.index(i),
                key.as_str(),
                "exists in both matchLabelKeys and labelSelector",
            );
        }
    }
}
