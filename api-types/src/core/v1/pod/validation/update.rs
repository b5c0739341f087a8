//! `ValidatePodUpdate`: what an update may change in a pod's spec.

use std::collections::BTreeSet;

use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1123_subdomain_errors, inclusive_range_error,
};

use crate::core::v1::pod::Pod;
use crate::core::v1::pod::container::Container;

/// `ValidatePodCreate`'s rule, which an update lifts.
const EPHEMERAL_ON_CREATE: &str = "Forbidden: cannot be set on create";

/// The `Pod` hook: ephemeral containers are added through their own
/// subresource, never on create (an update drops this error again); and the
/// claims of ephemeral volumes, named after the pod, get valid names that no
/// other volume refers to.
pub(crate) fn validate_pod(pod: &Pod, path: &FieldPath, errs: &mut FieldErrors) {
    ephemeral_claim_names(pod, &path.child("spec").child("volumes"), errs);
    if pod
        .spec
        .ephemeral_containers
        .as_ref()
        .is_some_and(|e| !e.is_empty())
    {
        errs.forbidden(
            path.child("spec").child("ephemeralContainers"),
            "cannot be set on create",
        );
    }
}

/// The part of `ValidateVolumes` that needs the pod's name: the claim of an
/// ephemeral volume is `<pod>-<volume>`, a valid object name that a
/// `persistentVolumeClaim` volume may not name.
fn ephemeral_claim_names(pod: &Pod, path: &FieldPath, errs: &mut FieldErrors) {
    let pod_name = pod.metadata.name.as_deref().unwrap_or_default();
    if pod_name.is_empty() {
        return;
    }
    let volumes = pod.spec.volumes.as_deref().unwrap_or_default();
    let created: BTreeSet<String> = volumes
        .iter()
        .filter(|v| v.ephemeral.is_some())
        .map(|v| format!("{pod_name}-{}", v.name))
        .collect();
    for (i, volume) in volumes.iter().enumerate() {
        let item = path.index(i);
        let first = super::volume_sources(volume).first().copied();
        if first == Some("ephemeral") && !volume.name.is_empty() {
            let claim = format!("{pod_name}-{}", volume.name);
            for detail in dns1123_subdomain_errors(&claim) {
                let detail = format!("PVC name {claim:?}: {detail}");
                errs.invalid(item.child("name"), volume.name.as_str(), &detail);
            }
        }
        if let Some(claim) = &volume.persistent_volume_claim
            && created.contains(&claim.claim_name)
        {
            errs.invalid(
                item.child("persistentVolumeClaim").child("claimName"),
                claim.claim_name.as_str(),
                "must not reference a PVC that gets created for an ephemeral volume",
            );
        }
    }
}

/// The fields an update may change, as upstream lists them in its message.
const UPDATABLE: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,\
`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),\
`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// The `Pod` update hook: images may change, the deadline may shrink,
/// tolerations may be added (or change their seconds), scheduling gates may be
/// removed; anything else is `Forbidden` on `spec`. Upstream appends a Go diff
/// of the two specs to the message; we give the sentence only.
pub(crate) fn validate_pod_update(new: &Pod, old: &Pod, path: &FieldPath, errs: &mut FieldErrors) {
    let spec_path = path.child("spec");
    let ephemeral_path = spec_path.child("ephemeralContainers");
    errs.0
        .retain(|e| !(e.path == ephemeral_path && e.message == EPHEMERAL_ON_CREATE));
    let (new_spec, old_spec) = (&new.spec, &old.spec);
    let lists = [
        (
            "containers",
            &new_spec.containers[..],
            &old_spec.containers[..],
        ),
        (
            "initContainers",
            new_spec.init_containers.as_deref().unwrap_or_default(),
            old_spec.init_containers.as_deref().unwrap_or_default(),
        ),
    ];
    for (field, new_list, old_list) in lists {
        if !container_images(new_list, old_list, &spec_path.child(field), errs) {
            return;
        }
    }
    let deadline_path = spec_path.child("activeDeadlineSeconds");
    match (
        new_spec.active_deadline_seconds,
        old_spec.active_deadline_seconds,
    ) {
        (Some(n), _) if !(0..=i64::from(i32::MAX)).contains(&n) => {
            let detail = inclusive_range_error(0, i64::from(i32::MAX));
            errs.invalid(deadline_path, n, &detail);
            return;
        }
        (Some(n), Some(o)) if o < n => {
            errs.invalid(
                deadline_path,
                n,
                "must be less than or equal to previous value",
            );
            return;
        }
        (None, Some(_)) => errs.invalid(
            deadline_path,
            crate::validation::Raw("nil"),
            "must not update from a positive integer to nil value",
        ),
        _ => {}
    }
    let new_tolerations = new_spec.tolerations.as_deref().unwrap_or_default();
    for old_toleration in old_spec.tolerations.iter().flatten() {
        let kept = new_tolerations.iter().any(|t| {
            let mut same = old_toleration.clone();
            same.toleration_seconds = t.toleration_seconds;
            &same == t
        });
        if !kept {
            errs.forbidden(
                spec_path.child("tolerations"),
                "existing toleration can not be modified except its tolerationSeconds",
            );
            break;
        }
    }
    if new_spec == old_spec {
        return;
    }
    let mut munged = new_spec.clone();
    for (c, o) in munged.containers.iter_mut().zip(&old_spec.containers) {
        c.image.clone_from(&o.image);
    }
    let old_init = old_spec.init_containers.iter().flatten();
    for (c, o) in munged.init_containers.iter_mut().flatten().zip(old_init) {
        c.image.clone_from(&o.image);
    }
    munged.active_deadline_seconds = old_spec.active_deadline_seconds;
    munged
        .scheduling_gates
        .clone_from(&old_spec.scheduling_gates);
    munged.tolerations.clone_from(&old_spec.tolerations);
    if old_spec
        .termination_grace_period_seconds
        .is_some_and(|s| s < 0)
        && munged.termination_grace_period_seconds == Some(1)
    {
        munged.termination_grace_period_seconds = old_spec.termination_grace_period_seconds;
    }
    if &munged != old_spec {
        let detail = format!("pod updates may not change fields other than {UPDATABLE}");
        errs.forbidden(spec_path, &detail);
    }
}

/// `ValidateContainerUpdates`: the same number of containers, each with an
/// image without surrounding blanks; `false` stops the update checks.
fn container_images(
    new: &[Container],
    old: &[Container],
    path: &FieldPath,
    errs: &mut FieldErrors,
) -> bool {
    if new.len() != old.len() {
        errs.forbidden(path.clone(), "pod updates may not add or remove containers");
        return false;
    }
    for (i, container) in new.iter().enumerate() {
        let image = container.image.as_deref().unwrap_or_default();
        if image.is_empty() {
            errs.required(path.index(i).child("image"), "");
        }
        if image.trim() != image {
            errs.invalid(
                path.index(i).child("image"),
                image,
                "must not have leading or trailing whitespace",
            );
        }
    }
    true
}

/// The annotation the kubelet sets on the API mirror of a static pod.
const MIRROR_POD_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// `ValidatePodEphemeralContainersUpdate`, the checks of a write through
/// `pods/<name>/ephemeralcontainers` (after the pod's own validation):
/// ephemeral containers may be added, never removed or changed, and never to a
/// static pod. Upstream appends a Go diff to the "may not be changed" message;
/// we give the sentence only.
pub(crate) fn validate_ephemeral_containers_update(
    new: &Pod,
    old: &Pod,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let list_path = path.child("spec").child("ephemeralContainers");
    errs.0
        .retain(|e| !(e.path == list_path && e.message == EPHEMERAL_ON_CREATE));
    let static_pod = old
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(MIRROR_POD_ANNOTATION));
    if static_pod {
        *errs = FieldErrors::default();
        errs.forbidden(
            path.clone(),
            "static pods do not support ephemeral containers",
        );
        return;
    }
    let new_list = new.spec.ephemeral_containers.as_deref().unwrap_or_default();
    for existing in old.spec.ephemeral_containers.iter().flatten() {
        match new_list.iter().find(|c| c.name == existing.name) {
            None => errs.forbidden(
                list_path.clone(),
                &format!(
                    "existing ephemeral containers {:?} may not be removed\n",
                    existing.name
                ),
            ),
            Some(container) if container != existing => errs.forbidden(
                list_path.key(&existing.name),
                &format!(
                    "existing ephemeral containers {:?} may not be changed\n",
                    existing.name
                ),
            ),
            Some(_) => {}
        }
    }
}
