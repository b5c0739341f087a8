//! The `Warning` headers of writes of pods and pod templates, as
//! kube-apiserver 1.32 sends them (pkg/api/pod's warnings): deprecated node
//! labels, annotations and volume plugins, duplicates that apply would drop,
//! fractional byte quantities, seccomp annotations without their field, and a
//! pod name that makes a surprising hostname.

use std::collections::{BTreeMap, BTreeSet};

use kapi_runtime::ApiType;
use kapi_runtime::validation::{FieldPath, dns1123_label_errors};

use super::Pod;
use super::affinity::NodeSelectorTerm;
use super::container::Container;
use super::spec::{PodSpec, PodTemplateSpec};
use crate::core::v1::validation::claim_spec_warnings;
use crate::node::v1::warnings::deprecated_node_label;
use kapi_runtime::meta::ObjectMeta;

/// Annotations that no longer do anything.
const DEPRECATED_ANNOTATIONS: &[(&str, &str)] = &[
    (
        "scheduler.alpha.kubernetes.io/critical-pod",
        "non-functional in v1.16+; use the \"priorityClassName\" field instead",
    ),
    (
        "security.alpha.kubernetes.io/sysctls",
        "non-functional in v1.11+; use the \"sysctls\" field instead",
    ),
    (
        "security.alpha.kubernetes.io/unsafe-sysctls",
        "non-functional in v1.11+; use the \"sysctls\" field instead",
    ),
];

const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_ANNOTATION_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";
const SECCOMP_MESSAGE: &str = "non-functional in v1.27+; use the \"seccompProfile\" field instead";

/// The `Pod` hook: on create, the pod's own warnings and a name that is no
/// DNS label (it becomes the pod's hostname). Updates warn about nothing:
/// upstream skips the cost on what is mostly the kubelet's frequent path.
pub(crate) fn pod_warnings(pod: &Pod, old: Option<&Pod>) -> Vec<String> {
    if old.is_some() {
        return Vec::new();
    }
    let mut warnings = spec_and_meta(None, &pod.spec, &pod.metadata);
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let problems = dns1123_label_errors(name);
    if !problems.is_empty() {
        warnings.push(format!(
            "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [{}]",
            problems.join(" ")
        ));
    }
    warnings
}

/// The warnings of a workload's pod template at `path` (`spec.template`), on
/// create and on an update that changed the workload's spec (`spec` against
/// the stored `old_spec`), as the workload strategies warn.
pub(crate) fn template_warnings<S: ApiType>(
    path: &[&str],
    template: Option<&PodTemplateSpec>,
    spec: &S,
    old_spec: Option<&S>,
) -> Vec<String> {
    let Some(template) = template else {
        return Vec::new();
    };
    if old_spec.is_some_and(|old| spec.semantic_eq(old)) {
        return Vec::new();
    }
    let mut field = FieldPath::new(path[0]);
    for part in &path[1..] {
        field = field.child(part);
    }
    spec_and_meta(Some(&field), &template.spec, &template.metadata)
}

/// `path` joined with `child` (`spec`, or `spec.template.spec` in a template).
fn at(path: Option<&FieldPath>, child: &str) -> FieldPath {
    match path {
        Some(path) => path.child(child),
        None => FieldPath::new(child),
    }
}

fn spec_and_meta(path: Option<&FieldPath>, spec: &PodSpec, meta: &ObjectMeta) -> Vec<String> {
    let mut warnings = Vec::new();
    let spec_path = at(path, "spec");
    let annotations_path = at(path, "metadata").child("annotations");
    let annotations = meta.annotations.clone().unwrap_or_default();
    for key in spec.node_selector.iter().flatten().map(|(k, _)| k) {
        if let Some(message) = deprecated_node_label(key) {
            let field = spec_path.child("nodeSelector").key(key);
            warnings.push(format!("{field}: {message}"));
        }
    }
    node_affinity_warnings(&spec_path, spec, &mut warnings);
    for (i, constraint) in spec
        .topology_spread_constraints
        .iter()
        .flatten()
        .enumerate()
    {
        let field = spec_path.child("topologySpreadConstraints").index(i);
        let key = &constraint.topology_key;
        if let Some(message) = deprecated_node_label(key) {
            warnings.push(format!(
                "{}: {key} is {message}",
                field.child("topologyKey")
            ));
        }
        if constraint.label_selector.is_none() {
            warnings.push(format!(
                "{}: a null labelSelector results in matching no pod",
                field.child("labelSelector")
            ));
        }
    }
    for (key, message) in DEPRECATED_ANNOTATIONS {
        if annotations.contains_key(*key) {
            warnings.push(format!("{}: {message}", annotations_path.key(key)));
        }
    }
    volume_warnings(&spec_path, spec, &mut warnings);
    duplicates(&spec_path, spec, &mut warnings);
    for (resource, value) in spec.overhead.iter().flatten() {
        if let Some(text) = fractional_bytes(resource, &value.0) {
            warnings.push(format!(
                "{}: fractional byte value {text:?} is invalid, must be an integer",
                spec_path.child("overhead").key(resource)
            ));
        }
    }
    let pod_seccomp = spec
        .security_context
        .as_ref()
        .is_some_and(|s| s.seccomp_profile.is_some());
    if !pod_seccomp && annotations.contains_key(SECCOMP_POD_ANNOTATION) {
        let field = annotations_path.key(SECCOMP_POD_ANNOTATION);
        warnings.push(format!("{field}: {SECCOMP_MESSAGE}"));
    }
    let containers = [
        (
            "initContainers",
            spec.init_containers.as_deref().unwrap_or_default(),
        ),
        ("containers", spec.containers.as_slice()),
    ];
    for (list, containers) in containers {
        for (i, container) in containers.iter().enumerate() {
            let path = spec_path.child(list).index(i);
            let context = (&annotations_path, &annotations);
            container_warnings(&path, container, context, &mut warnings);
        }
    }
    port_warnings(&spec_path, &containers, &mut warnings);
    warnings
}

fn volume_warnings(spec_path: &FieldPath, spec: &PodSpec, warnings: &mut Vec<String>) {
    for (i, volume) in spec.volumes.iter().flatten().enumerate() {
        let path = spec_path.child("volumes").index(i);
        let deprecated = [
            (
                volume.photon_persistent_disk.is_some(),
                "photonPersistentDisk",
                "deprecated in v1.11, non-functional in v1.16+",
            ),
            (volume.git_repo.is_some(), "gitRepo", "deprecated in v1.11"),
            (
                volume.scale_io.is_some(),
                "scaleIO",
                "deprecated in v1.16, non-functional in v1.22+",
            ),
            (
                volume.flocker.is_some(),
                "flocker",
                "deprecated in v1.22, non-functional in v1.25+",
            ),
            (
                volume.storageos.is_some(),
                "storageOS",
                "deprecated in v1.22, non-functional in v1.25+",
            ),
            (
                volume.quobyte.is_some(),
                "quobyte",
                "deprecated in v1.22, non-functional in v1.25+",
            ),
            (
                volume.glusterfs.is_some(),
                "glusterfs",
                "deprecated in v1.25, non-functional in v1.26+",
            ),
            (
                volume.cephfs.is_some(),
                "cephfs",
                "deprecated in v1.28, non-functional in v1.31+",
            ),
            (
                volume.rbd.is_some(),
                "rbd",
                "deprecated in v1.28, non-functional in v1.31+",
            ),
        ];
        for (_, field, message) in deprecated.iter().filter(|(used, ..)| *used) {
            warnings.push(format!("{}: {message}", path.child(field)));
        }
        let claim = volume.ephemeral.as_ref();
        if let Some(template) = claim.and_then(|e| e.volume_claim_template.as_ref()) {
            let at = path
                .child("ephemeral")
                .child("volumeClaimTemplate")
                .child("spec");
            claim_spec_warnings(&at, &template.spec, warnings);
        }
    }
}

/// Host aliases with the same IP and image pull secrets with the same (or no)
/// name: the later ones are dropped by apply.
fn duplicates(spec_path: &FieldPath, spec: &PodSpec, warnings: &mut Vec<String>) {
    let aliases = spec.host_aliases.as_deref().unwrap_or_default();
    if aliases.len() > 1 {
        let mut seen = BTreeSet::new();
        for (i, alias) in aliases.iter().enumerate() {
            if !seen.insert(alias.ip.as_str()) {
                let field = spec_path.child("hostAliases").index(i).child("ip");
                warnings.push(format!("{field}: duplicate ip {:?}", alias.ip));
            }
        }
    }
    let secrets = spec.image_pull_secrets.as_deref().unwrap_or_default();
    if secrets.len() > 1 {
        let mut seen = BTreeSet::new();
        for (i, secret) in secrets.iter().enumerate() {
            let name = secret.name.as_deref().unwrap_or_default();
            if !seen.insert(name) {
                let field = spec_path.child("imagePullSecrets").index(i).child("name");
                warnings.push(format!("{field}: duplicate name {name:?}"));
            }
        }
    }
    for (i, secret) in secrets.iter().enumerate() {
        let name = secret.name.as_deref().unwrap_or_default();
        if name.is_empty() {
            let field = spec_path.child("imagePullSecrets").index(i).child("name");
            warnings.push(format!("{field}: invalid empty name {name:?}"));
        }
    }
}

/// One container's warnings; `annotations` are the pod's, with their path.
fn container_warnings(
    path: &FieldPath,
    container: &Container,
    (annotations_path, annotations): (&FieldPath, &BTreeMap<String, String>),
    warnings: &mut Vec<String>,
) {
    let seccomp = container
        .security_context
        .as_ref()
        .is_some_and(|s| s.seccomp_profile.is_some());
    let key = format!("{SECCOMP_CONTAINER_ANNOTATION_PREFIX}{}", container.name);
    if !seccomp && annotations.contains_key(&key) {
        let field = annotations_path.key(&key);
        warnings.push(format!("{field}: {SECCOMP_MESSAGE}"));
    }
    let resources = &container.resources;
    for (kind, list) in [
        ("limits", &resources.limits),
        ("requests", &resources.requests),
    ] {
        for (resource, value) in list.iter().flatten() {
            if let Some(text) = fractional_bytes(resource, &value.0) {
                warnings.push(format!(
                    "{}: fractional byte value {text:?} is invalid, must be an integer",
                    path.child("resources").child(kind).key(resource)
                ));
            }
        }
    }
    let env = container.env.as_deref().unwrap_or_default();
    if env.len() > 1 {
        let mut seen = BTreeSet::new();
        for (i, var) in env.iter().enumerate() {
            if seen.insert(var.name.as_str()) {
                continue;
            }
            let reference = format!("$({})", var.name);
            let value = var.value.as_deref().unwrap_or_default();
            let hides =
                var.value_from.is_some() || value == reference || !value.contains(&reference);
            if hides {
                warnings.push(format!(
                    "{}: hides previous definition of {:?}, which may be dropped when using apply",
                    path.child("env").index(i),
                    var.name
                ));
            }
        }
    }
}

/// What makes two port definitions the same: number, protocol, host IP and
/// host port.
type PortKey<'a> = (i32, &'a str, &'a str, i32);

/// Ports defined twice across the containers (same number, protocol, host IP
/// and host port).
fn port_warnings(
    spec_path: &FieldPath,
    containers: &[(&str, &[Container])],
    warnings: &mut Vec<String>,
) {
    let mut seen: Vec<(String, PortKey<'_>)> = Vec::new();
    for (list, containers) in containers {
        for (i, container) in containers.iter().enumerate() {
            let ports_path = spec_path.child(list).index(i).child("ports");
            for (j, port) in container.ports.iter().flatten().enumerate() {
                let key = (
                    port.container_port,
                    port.protocol.as_deref().unwrap_or("TCP"),
                    port.host_ip.as_deref().unwrap_or_default(),
                    port.host_port.unwrap_or(0),
                );
                let field = ports_path.index(j).to_string();
                if let Some((other, _)) = seen.iter().find(|(_, k)| *k == key) {
                    warnings.push(format!("{field}: duplicate port definition with {other}"));
                }
                seen.push((field, key));
            }
        }
    }
}

/// The canonical text of a memory or ephemeral-storage quantity that is not a
/// whole number of bytes.
fn fractional_bytes(resource: &str, text: &str) -> Option<String> {
    if resource != "memory" && resource != "ephemeral-storage" {
        return None;
    }
    fractional(text)
}

/// The canonical text of a quantity that is not a whole number.
pub(crate) fn fractional(text: &str) -> Option<String> {
    let canonical = kapi_runtime::quantity::canonical(text)?;
    canonical.ends_with(['m', 'u', 'n']).then_some(canonical)
}

/// `GetWarningsForNodeSelectorTerm`: deprecated node labels in the
/// expressions of the term at `path`.
pub(crate) fn node_selector_term_warnings(
    term: &NodeSelectorTerm,
    path: &FieldPath,
    warnings: &mut Vec<String>,
) {
    for (i, requirement) in term.match_expressions.iter().flatten().enumerate() {
        let key = &requirement.key;
        if let Some(message) = deprecated_node_label(key) {
            let field = path.child("matchExpressions").index(i).child("key");
            warnings.push(format!("{field}: {key} is {message}"));
        }
    }
}

/// Deprecated node labels in the pod's node affinity, required and preferred.
fn node_affinity_warnings(spec_path: &FieldPath, spec: &PodSpec, warnings: &mut Vec<String>) {
    let affinity = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref());
    let Some(affinity) = affinity else {
        return;
    };
    let path = spec_path.child("affinity").child("nodeAffinity");
    if let Some(required) = &affinity.required_during_scheduling_ignored_during_execution {
        let terms = path
            .child("requiredDuringSchedulingIgnoredDuringExecution")
            .child("nodeSelectorTerms");
        for (i, term) in required.node_selector_terms.iter().enumerate() {
            node_selector_term_warnings(term, &terms.index(i), warnings);
        }
    }
    let preferred = affinity
        .preferred_during_scheduling_ignored_during_execution
        .iter()
        .flatten();
    let preferred_path = path.child("preferredDuringSchedulingIgnoredDuringExecution");
    for (i, term) in preferred.enumerate() {
        let at = preferred_path.index(i).child("preference");
        node_selector_term_warnings(&term.preference, &at, warnings);
    }
}
