//! Node taints, namespace finalizers and persistent volume claims
//! (`validateNodeTaints`, `ValidateNamespace`,
//! `ValidatePersistentVolumeClaim[Update]`).

use std::collections::BTreeSet;

use kapi_runtime::validation::{FieldErrors, FieldPath, label_value_errors, qualified_name_errors};

use crate::core::v1::namespace::Namespace;
use crate::core::v1::node::Node;
use crate::core::v1::persistent_volume_claim::{PersistentVolumeClaim, PersistentVolumeClaimSpec};
use crate::validation::{
    GoStrings, Raw, cidr, label_name, quantity_value, validate_label_selector,
};

const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// The `Node` hook: pod CIDRs, and taint keys, values and effects, unique by
/// key and effect. Upstream reports taints under `metadata.taints`, not
/// `spec.taints`. A `podCIDR` alone counts as the first of `podCIDRs`, as
/// the node strategy makes it before validating.
pub(crate) fn validate_node(node: &Node, _path: &FieldPath, errs: &mut FieldErrors) {
    let single = node.spec.pod_cidr.iter().cloned().collect::<Vec<_>>();
    let cidrs = match node.spec.pod_cidrs.as_deref() {
        Some(list) if !list.is_empty() => list,
        _ => single.as_slice(),
    };
    let cidrs_path = FieldPath::new("spec").child("podCIDRs");
    let before = errs.0.len();
    for (i, value) in cidrs.iter().enumerate() {
        cidr(value, &cidrs_path.index(i), errs);
    }
    // Several CIDRs: one of each family (checked on valid CIDRs only).
    if cidrs.len() > 1 && errs.0.len() == before {
        let v6 = cidrs.iter().filter(|c| c.contains(':')).count();
        if cidrs.len() > 2 || v6 != 1 {
            errs.invalid(
                cidrs_path,
                GoStrings(Some(cidrs)),
                "may specify no more than one CIDR for each IP family",
            );
        }
    }
    let taints_path = FieldPath::new("metadata").child("taints");
    let mut seen = BTreeSet::new();
    for (i, taint) in node.spec.taints.iter().flatten().enumerate() {
        let item = taints_path.index(i);
        label_name(&taint.key, &item.child("key"), errs);
        let value = taint.value.as_deref().unwrap_or_default();
        let problems = label_value_errors(value);
        if !problems.is_empty() {
            errs.invalid(item.child("value"), value, &problems.join(";"));
        }
        match taint.effect.as_str() {
            "" => errs.required(item.child("effect"), ""),
            e if TAINT_EFFECTS.contains(&e) => {}
            other => errs.not_supported(item.child("effect"), other, &TAINT_EFFECTS),
        }
        if !seen.insert((taint.effect.as_str(), taint.key.as_str())) {
            let time = if taint.time_added.is_some() {
                "&{...}"
            } else {
                "<nil>"
            };
            let value = format!(
                "core.Taint{{Key:{:?}, Value:{value:?}, Effect:{:?}, TimeAdded:{time}}}: \
                 taints must be unique by key and effect pair",
                taint.key, taint.effect
            );
            errs.duplicate(item, Raw(&value));
        }
    }
}

/// The `Node` update hook (`ValidateNodeUpdate`): pod CIDRs and the
/// provider ID may be set once, never changed.
pub(crate) fn validate_node_update(
    new: &Node,
    old: &Node,
    _path: &FieldPath,
    errs: &mut FieldErrors,
) {
    const ONCE: &str = "node updates may not change podCIDR except from \"\" to valid";
    let cidrs_path = FieldPath::new("spec").child("podCIDRs");
    let old_cidrs = old.spec.pod_cidrs.as_deref().unwrap_or_default();
    let new_cidrs = new.spec.pod_cidrs.as_deref().unwrap_or_default();
    if !old_cidrs.is_empty() {
        if old_cidrs.len() != new_cidrs.len() {
            errs.forbidden(cidrs_path, ONCE);
        } else {
            // Upstream reports each changed CIDR on the list, not the item.
            for _ in old_cidrs.iter().zip(new_cidrs).filter(|(o, n)| o != n) {
                errs.forbidden(cidrs_path.clone(), ONCE);
            }
        }
    }
    let old_id = old.spec.provider_id.as_deref().unwrap_or_default();
    if !old_id.is_empty() && new.spec.provider_id.as_deref().unwrap_or_default() != old_id {
        errs.forbidden(
            FieldPath::new("spec").child("providerID"),
            "node updates may not change providerID except from \"\" to valid",
        );
    }
}

/// The `Namespace` hook: finalizers are qualified names, and a name without a
/// domain is a standard one.
pub(crate) fn validate_namespace(ns: &Namespace, path: &FieldPath, errs: &mut FieldErrors) {
    let finalizers_path = path.child("spec").child("finalizers");
    for finalizer in ns.spec.finalizers.iter().flatten() {
        for detail in qualified_name_errors(finalizer) {
            errs.invalid(finalizers_path.clone(), finalizer.as_str(), &detail);
        }
        let standard = matches!(
            finalizer.as_str(),
            "kubernetes" | "orphan" | "foregroundDeletion"
        );
        if !finalizer.contains('/') && !standard {
            errs.invalid(
                finalizers_path.clone(),
                finalizer.as_str(),
                "name is neither a standard finalizer name nor is it fully qualified",
            );
        }
    }
}

/// The `PersistentVolumeClaim` hook.
pub(crate) fn validate_pvc(pvc: &PersistentVolumeClaim, path: &FieldPath, errs: &mut FieldErrors) {
    validate_pvc_spec(&pvc.spec, &path.child("spec"), errs);
}

/// `ValidatePersistentVolumeClaimSpec` (a claim's, or an ephemeral volume's
/// template's): access modes, a positive storage request, the selector.
pub(crate) fn validate_pvc_spec(
    spec: &PersistentVolumeClaimSpec,
    spec_path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let modes = spec.access_modes.as_deref().unwrap_or_default();
    let modes_path = spec_path.child("accessModes");
    if modes.is_empty() {
        errs.required(modes_path.clone(), "at least 1 access mode is required");
    }
    if let Some(selector) = &spec.selector {
        validate_label_selector(selector, &spec_path.child("selector"), errs);
    }
    super::volume::access_modes(modes, &modes_path, errs);
    let storage_path = spec_path.child("resources").key("storage");
    match spec
        .resources
        .requests
        .as_ref()
        .and_then(|r| r.get("storage"))
    {
        None => errs.required(storage_path, ""),
        Some(q) if quantity_value(q).is_some_and(|v| v <= 0.0) => {
            errs.invalid(storage_path, q.0.as_str(), "must be greater than zero")
        }
        Some(_) => {}
    }
}

/// The `PersistentVolumeClaim` update hook: the spec is immutable, except the
/// volume name once and the storage request of a bound claim, which may not
/// shrink. Upstream appends a Go diff of the specs to the message; we give the
/// sentence only.
pub(crate) fn validate_pvc_update(
    new: &PersistentVolumeClaim,
    old: &PersistentVolumeClaim,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let mut old_spec = old.spec.clone();
    let mut new_spec = new.spec.clone();
    if old_spec
        .volume_name
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        old_spec.volume_name.clone_from(&new_spec.volume_name);
    }
    let bound = new.status.phase.as_deref() == Some("Bound");
    let old_storage = old
        .spec
        .resources
        .requests
        .as_ref()
        .and_then(|r| r.get("storage"));
    if bound && let Some(requests) = new_spec.resources.requests.as_mut() {
        match old_storage {
            Some(q) => requests.insert("storage".to_owned(), q.clone()),
            None => requests.remove("storage"),
        };
    }
    if new_spec != old_spec {
        errs.forbidden(
            path.child("spec"),
            "spec is immutable after creation except resources.requests and \
             volumeAttributesClassName for bound claims",
        );
    }
    let new_storage = new
        .spec
        .resources
        .requests
        .as_ref()
        .and_then(|r| r.get("storage"));
    let (new_value, old_value) = (
        new_storage.and_then(quantity_value),
        old_storage.and_then(quantity_value),
    );
    if let (Some(n), Some(o)) = (new_value, old_value)
        && n < o
    {
        let storage = path
            .child("spec")
            .child("resources")
            .child("requests")
            .child("storage");
        errs.forbidden(storage, "field can not be less than previous value");
    }
}
