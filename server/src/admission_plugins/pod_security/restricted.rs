//! The checks the restricted level adds.

use std::collections::BTreeSet;

use kapi_api_types::core::v1::pod::volume::Volume;

use super::checks::{
    PodShape, added_beyond, bad_seccomp, containers, containers_phrase, found, is_windows,
    join_quote, plural, seccomp, volumes,
};

/// The volume types the restricted level allows.
pub(super) const RESTRICTED_VOLUME_TYPES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

pub(super) fn capabilities_restricted(pod: PodShape<'_>) -> Option<(String, String)> {
    if is_windows(pod) {
        return None;
    }
    let not_dropping: Vec<&str> = containers(pod)
        .filter(|c| {
            let drop = c
                .security
                .and_then(|s| s.capabilities.as_ref())
                .and_then(|c| c.drop.as_deref())
                .unwrap_or_default();
            !drop.iter().any(|d| d == "ALL")
        })
        .map(|c| c.name)
        .collect();
    let (adding, capabilities) = added_beyond(pod, &["NET_BIND_SERVICE"]);
    let mut details = Vec::new();
    if !not_dropping.is_empty() {
        details.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            containers_phrase(&not_dropping)
        ));
    }
    if !adding.is_empty() {
        details.push(format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&adding),
            join_quote(&capabilities)
        ));
    }
    if details.is_empty() {
        return None;
    }
    found("unrestricted capabilities", details.join("; "))
}

pub(super) fn seccomp_restricted(pod: PodShape<'_>) -> Option<(String, String)> {
    if is_windows(pod) {
        return None;
    }
    let (setters, values, implicit) = seccomp(pod, |t| t == "RuntimeDefault" || t == "Localhost");
    if !setters.is_empty() {
        return bad_seccomp(&setters, &values);
    }
    if implicit.is_empty() {
        return None;
    }
    found(
        "seccompProfile",
        format!(
            "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
            containers_phrase(&implicit)
        ),
    )
}

pub(super) fn privilege_escalation(pod: PodShape<'_>) -> Option<(String, String)> {
    if is_windows(pod) {
        return None;
    }
    let bad: Vec<&str> = containers(pod)
        .filter(|c| c.security.and_then(|s| s.allow_privilege_escalation) != Some(false))
        .map(|c| c.name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    found(
        "allowPrivilegeEscalation != false",
        format!(
            "{} must set securityContext.allowPrivilegeEscalation=false",
            containers_phrase(&bad)
        ),
    )
}

pub(super) fn restricted_volumes(pod: PodShape<'_>) -> Option<(String, String)> {
    let mut names = Vec::new();
    let mut types = BTreeSet::new();
    for volume in volumes(pod) {
        let source = source_type(volume);
        if !RESTRICTED_VOLUME_TYPES.contains(&source) {
            names.push(volume.name.as_str());
            types.insert(source);
        }
    }
    if names.is_empty() {
        return None;
    }
    let types: Vec<&str> = types.into_iter().collect();
    found(
        "restricted volume types",
        format!(
            "{} {} {} restricted {} {}",
            plural("volume", "volumes", names.len()),
            join_quote(&names),
            plural("uses", "use", names.len()),
            plural("volume type", "volume types", types.len()),
            join_quote(&types)
        ),
    )
}

/// The name of a volume's source (its field in the JSON), `unknown` for
/// none.
fn source_type(volume: &Volume) -> &'static str {
    let v = volume;
    // In the order of the volume's JSON (its struct's fields), whose first
    // source the check names.
    let sources = [
        ("hostPath", v.host_path.is_some()),
        ("emptyDir", v.empty_dir.is_some()),
        ("gcePersistentDisk", v.gce_persistent_disk.is_some()),
        ("awsElasticBlockStore", v.aws_elastic_block_store.is_some()),
        ("gitRepo", v.git_repo.is_some()),
        ("secret", v.secret.is_some()),
        ("nfs", v.nfs.is_some()),
        ("iscsi", v.iscsi.is_some()),
        ("glusterfs", v.glusterfs.is_some()),
        ("persistentVolumeClaim", v.persistent_volume_claim.is_some()),
        ("rbd", v.rbd.is_some()),
        ("flexVolume", v.flex_volume.is_some()),
        ("cinder", v.cinder.is_some()),
        ("cephfs", v.cephfs.is_some()),
        ("flocker", v.flocker.is_some()),
        ("downwardAPI", v.downward_api.is_some()),
        ("fc", v.fc.is_some()),
        ("azureFile", v.azure_file.is_some()),
        ("configMap", v.config_map.is_some()),
        ("vsphereVolume", v.vsphere_volume.is_some()),
        ("quobyte", v.quobyte.is_some()),
        ("azureDisk", v.azure_disk.is_some()),
        ("photonPersistentDisk", v.photon_persistent_disk.is_some()),
        ("projected", v.projected.is_some()),
        ("portworxVolume", v.portworx_volume.is_some()),
        ("scaleIO", v.scale_io.is_some()),
        ("storageos", v.storageos.is_some()),
        ("csi", v.csi.is_some()),
        ("ephemeral", v.ephemeral.is_some()),
        ("image", v.image.is_some()),
    ];
    sources
        .into_iter()
        .find(|(_, set)| *set)
        .map_or("unknown", |(name, _)| name)
}

pub(super) fn run_as_non_root(pod: PodShape<'_>) -> Option<(String, String)> {
    let mut setters = Vec::new();
    let pod_value = pod.security().and_then(|s| s.run_as_non_root);
    if pod_value == Some(false) {
        setters.push("pod".to_owned());
    }
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for c in containers(pod) {
        match c.security.and_then(|s| s.run_as_non_root) {
            Some(false) => explicit.push(c.name),
            Some(true) => {}
            None if pod_value != Some(true) => implicit.push(c.name),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(containers_phrase(&explicit));
    }
    let reason = "runAsNonRoot != true";
    if !setters.is_empty() {
        return found(
            reason,
            format!(
                "{} must not set securityContext.runAsNonRoot=false",
                setters.join(" and ")
            ),
        );
    }
    if implicit.is_empty() {
        return None;
    }
    found(
        reason,
        format!(
            "pod or {} must set securityContext.runAsNonRoot=true",
            containers_phrase(&implicit)
        ),
    )
}

pub(super) fn run_as_user(pod: PodShape<'_>) -> Option<(String, String)> {
    let mut setters = Vec::new();
    if pod.security().and_then(|s| s.run_as_user) == Some(0) {
        setters.push("pod".to_owned());
    }
    let bad: Vec<&str> = containers(pod)
        .filter(|c| c.security.and_then(|s| s.run_as_user) == Some(0))
        .map(|c| c.name)
        .collect();
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    found(
        "runAsUser=0",
        format!("{} must not set runAsUser=0", setters.join(" and ")),
    )
}
