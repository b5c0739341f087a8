//! The `Warning` headers of workload writes beyond their pod template's (which
//! `core::v1::pod::warnings` words): a workload name that is no DNS label
//! (pods are named after it), and a stateful set's claim templates asking for
//! a fractional number of bytes. As kube-apiserver 1.32 sends them.

use std::collections::BTreeMap;

use kapi_runtime::Quantity;
use kapi_runtime::meta::ObjectMeta;
use kapi_runtime::validation::{FieldPath, dns1123_label_errors};

use super::StatefulSet;

/// On create, a name that is no DNS label: the controllers name pods (and so
/// hostnames) after it. Deployments, ReplicaSets, Jobs and CronJobs warn so.
pub(crate) fn pod_name_source_warning(meta: &ObjectMeta) -> Option<String> {
    let problems = dns1123_label_errors(meta.name.as_deref().unwrap_or_default());
    (!problems.is_empty()).then(|| {
        format!(
            "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [{}]",
            problems.join(" ")
        )
    })
}

/// The claim templates' warnings, on create and on every update (also one
/// that leaves the spec alone). Upstream's update path names each claim's
/// spec `Spec` (capitalised) where the create path leaves it out; both kept.
pub(super) fn claim_template_warnings(set: &StatefulSet, update: bool) -> Vec<String> {
    let mut warnings = Vec::new();
    for (i, claim) in set.spec.volume_claim_templates.iter().flatten().enumerate() {
        let mut path = FieldPath::new("spec")
            .child("volumeClaimTemplates")
            .index(i);
        if update {
            path = path.child("Spec");
        }
        let resources = &claim.spec.resources;
        for (list, quantities) in [
            ("requests", &resources.requests),
            ("limits", &resources.limits),
        ] {
            if let Some(text) = fractional_storage(quantities) {
                warnings.push(format!(
                    "{}: fractional byte value {text:?} is invalid, must be an integer",
                    path.child("resources").child(list).key("storage")
                ));
            }
        }
    }
    warnings
}

/// The canonical form of a `storage` quantity that is not a whole number of
/// bytes (its canonical form then ends in a milli, micro or nano suffix).
fn fractional_storage(quantities: &Option<BTreeMap<String, Quantity>>) -> Option<String> {
    let value = quantities.as_ref()?.get("storage")?;
    let canonical = kapi_runtime::quantity::canonical(&value.0)?;
    canonical.ends_with(['m', 'u', 'n']).then_some(canonical)
}
