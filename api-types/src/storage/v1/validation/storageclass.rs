//! `ValidateStorageClass` and `ValidateStorageClassUpdate`.

use std::collections::{BTreeMap, BTreeSet};

use kapi_runtime::validation::{FieldErrors, FieldPath, qualified_name_errors};

use super::super::storageclass::StorageClass;
use crate::core::v1::topology_selector_term::TopologySelectorTerm;
use crate::validation::label_name;

/// At most this many parameters (`maxProvisionerParameterLen`)...
const MAX_PARAMETERS: usize = 512;
/// ...of at most this many bytes in all (`maxProvisionerParameterSize`).
const MAX_PARAMETERS_SIZE: usize = 256 * 1024;

/// The `StorageClass` hook. An empty provisioner is the field rule's
/// `Required`.
pub(crate) fn validate_storage_class(
    class: &StorageClass,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if !class.provisioner.is_empty() {
        // Upstream checks, and prints, the lowercased name.
        let lower = class.provisioner.to_lowercase();
        for detail in qualified_name_errors(&lower) {
            errs.invalid(path.child("provisioner"), lower.as_str(), &detail);
        }
    }
    parameters(class.parameters.as_ref(), &path.child("parameters"), errs);
    if let Some(policy) = class.reclaim_policy.as_deref()
        && !policy.is_empty()
        && !matches!(policy, "Delete" | "Retain")
    {
        errs.not_supported(path.child("reclaimPolicy"), policy, &["Delete", "Retain"]);
    }
    match class.volume_binding_mode.as_deref() {
        None => errs.required(path.child("volumeBindingMode"), ""),
        Some("Immediate" | "WaitForFirstConsumer") => {}
        Some(mode) => errs.not_supported(
            path.child("volumeBindingMode"),
            mode,
            &["Immediate", "WaitForFirstConsumer"],
        ),
    }
    let topologies = class.allowed_topologies.as_deref().unwrap_or_default();
    allowed_topologies(topologies, &path.child("allowedTopologies"), errs);
}

/// `validateParameters`: not too many, not too big, no empty key.
fn parameters(params: Option<&BTreeMap<String, String>>, path: &FieldPath, errs: &mut FieldErrors) {
    let params = params.into_iter().flatten();
    if params.clone().count() > MAX_PARAMETERS {
        errs.too_long(path.clone(), MAX_PARAMETERS);
        return;
    }
    let mut size = 0;
    for (key, value) in params {
        if key.is_empty() {
            errs.invalid(path.clone(), key.as_str(), "field can not be empty.");
        }
        size += key.len() + value.len();
    }
    if size > MAX_PARAMETERS_SIZE {
        errs.too_long(path.clone(), MAX_PARAMETERS_SIZE);
    }
}

/// The label keys of a term and the values each allows.
type TermMap = BTreeMap<String, BTreeSet<String>>;

/// `validateAllowedTopologies`. Upstream compares each term with the terms
/// before it, and also with as many empty ones as there are terms (its list
/// starts with that many nil maps), so an empty term is reported once per
/// term, and once more per empty term before it.
fn allowed_topologies(terms: &[TopologySelectorTerm], path: &FieldPath, errs: &mut FieldErrors) {
    let mut seen: Vec<TermMap> = vec![TermMap::new(); terms.len()];
    for (i, term) in terms.iter().enumerate() {
        let map = topology_term(term, &path.index(i), errs);
        for _ in seen.iter().filter(|other| **other == map) {
            errs.duplicate(path.index(i).child("matchLabelExpressions"), "");
        }
        seen.push(map);
    }
}

/// `ValidateTopologySelectorTerm`: keys are label names given once, each
/// with a set of values. (Empty values are the field rule's `Required`.)
fn topology_term(term: &TopologySelectorTerm, path: &FieldPath, errs: &mut FieldErrors) -> TermMap {
    let mut map = TermMap::new();
    let exprs_path = path.child("matchLabelExpressions");
    for (i, req) in term.match_label_expressions.iter().flatten().enumerate() {
        let req_path = exprs_path.index(i);
        let mut values = BTreeSet::new();
        for (j, value) in req.values.iter().flatten().enumerate() {
            if !values.insert(value.clone()) {
                errs.duplicate(req_path.child("values").index(j), value.as_str());
            }
        }
        label_name(&req.key, &req_path.child("key"), errs);
        if map.insert(req.key.clone(), values).is_some() {
            errs.duplicate(req_path.child("key"), req.key.as_str());
        }
    }
    map
}

/// The `StorageClass` update hook: parameters, provisioner and reclaim
/// policy are forbidden to change, the binding mode is immutable.
pub(crate) fn validate_storage_class_update(
    new: &StorageClass,
    old: &StorageClass,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let forbidden = [
        ("parameters", new.parameters != old.parameters),
        ("provisioner", new.provisioner != old.provisioner),
        ("reclaimPolicy", new.reclaim_policy != old.reclaim_policy),
    ];
    for (field, changed) in forbidden {
        if changed {
            errs.forbidden(
                path.child(field),
                &format!("updates to {field} are forbidden."),
            );
        }
    }
    if new.volume_binding_mode != old.volume_binding_mode {
        errs.invalid(
            path.child("volumeBindingMode"),
            new.volume_binding_mode.as_deref().unwrap_or_default(),
            "field is immutable",
        );
    }
}
