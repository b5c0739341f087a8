//! The checks of the Pod Security Standards (pod-security-admission's
//! `policy` package), in upstream's order (by check id), with its wording.
//! A restricted check that tightens a baseline one replaces it.

use std::collections::BTreeSet;

use kapi_api_types::core::v1::pod::container::ContainerPort;
use kapi_api_types::core::v1::pod::security::{PodSecurityContext, SecurityContext};
use kapi_api_types::core::v1::pod::spec::PodSpec;
use kapi_api_types::core::v1::pod::volume::Volume;
use kapi_runtime::meta::ObjectMeta;

use super::{baseline, restricted};

/// What the standards look at: a pod, or the pod template of a workload.
#[derive(Clone, Copy)]
pub struct PodShape<'a> {
    /// Its metadata (the AppArmor annotations).
    pub metadata: &'a ObjectMeta,
    /// Its spec.
    pub spec: &'a PodSpec,
}

impl<'a> PodShape<'a> {
    /// The pod's security context, if it has one.
    pub(super) fn security(self) -> Option<&'a PodSecurityContext> {
        self.spec.security_context.as_deref()
    }
}

/// One container of any list: its name, security context and ports.
pub(super) struct ContainerShape<'a> {
    pub name: &'a str,
    pub security: Option<&'a SecurityContext>,
    pub ports: &'a [ContainerPort],
}

type Check = fn(PodShape<'_>) -> Option<(String, String)>;

/// The violations of a pod at the baseline level (or the restricted one):
/// reason and detail of each.
pub fn evaluate(restricted: bool, pod: PodShape<'_>) -> Vec<(String, String)> {
    let baseline: [(&str, Check); 9] = [
        ("appArmorProfile", baseline::app_armor),
        ("capabilities_baseline", baseline::capabilities_baseline),
        ("hostNamespaces", baseline::host_namespaces),
        ("hostPathVolumes", baseline::host_path_volumes),
        ("hostPorts", baseline::host_ports),
        ("privileged", baseline::privileged),
        ("seLinuxOptions", baseline::selinux),
        ("seccompProfile_baseline", baseline::seccomp_baseline),
        ("sysctls", baseline::sysctls),
    ];
    let tightened: [(&str, Check); 6] = [
        ("allowPrivilegeEscalation", restricted::privilege_escalation),
        (
            "capabilities_restricted",
            restricted::capabilities_restricted,
        ),
        ("restrictedVolumes", restricted::restricted_volumes),
        ("runAsNonRoot", restricted::run_as_non_root),
        ("runAsUser", restricted::run_as_user),
        ("seccompProfile_restricted", restricted::seccomp_restricted),
    ];
    let replaced = [
        "capabilities_baseline",
        "hostPathVolumes",
        "seccompProfile_baseline",
    ];
    let checks = baseline
        .into_iter()
        .filter(|(id, _)| !restricted || !replaced.contains(id))
        .chain(tightened.into_iter().filter(|_| restricted));
    checks.filter_map(|(_, check)| check(pod)).collect()
}

/// Every container (init, regular, ephemeral, in that order).
pub(super) fn containers(pod: PodShape<'_>) -> impl Iterator<Item = ContainerShape<'_>> {
    let spec = pod.spec;
    let regular = spec
        .init_containers
        .iter()
        .flatten()
        .chain(&spec.containers)
        .map(|c| ContainerShape {
            name: &c.name,
            security: c.security_context.as_deref(),
            ports: c.ports.as_deref().unwrap_or_default(),
        });
    let ephemeral = spec
        .ephemeral_containers
        .iter()
        .flatten()
        .map(|c| ContainerShape {
            name: &c.name,
            security: c.security_context.as_deref(),
            ports: c.ports.as_deref().unwrap_or_default(),
        });
    regular.chain(ephemeral)
}

/// `"a", "b"`: Go's joinQuote (no escaping inside).
pub(super) fn join_quote<S: AsRef<str>>(items: &[S]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|i| format!("\"{}\"", i.as_ref()))
        .collect();
    quoted.join(", ")
}

pub(super) fn plural(one: &str, many: &str, count: usize) -> String {
    if count == 1 { one } else { many }.to_owned()
}

/// `container "a"` or `containers "a", "b"`.
pub(super) fn containers_phrase(names: &[&str]) -> String {
    format!(
        "{} {}",
        plural("container", "containers", names.len()),
        join_quote(names)
    )
}

pub(super) fn is_windows(pod: PodShape<'_>) -> bool {
    pod.spec.os.as_ref().is_some_and(|os| os.name == "windows")
}

pub(super) fn found(reason: &str, detail: String) -> Option<(String, String)> {
    Some((reason.to_owned(), detail))
}

/// The capabilities containers add beyond `allowed`: the containers and the
/// capabilities, sorted.
pub(super) fn added_beyond<'p>(
    pod: PodShape<'p>,
    allowed: &[&str],
) -> (Vec<&'p str>, Vec<&'p str>) {
    let mut bad = Vec::new();
    let mut capabilities = BTreeSet::new();
    for c in containers(pod) {
        let added = c
            .security
            .and_then(|s| s.capabilities.as_ref())
            .and_then(|c| c.add.as_deref())
            .unwrap_or_default();
        let extra: Vec<&str> = added
            .iter()
            .map(String::as_str)
            .filter(|cap| !allowed.contains(cap))
            .collect();
        if !extra.is_empty() {
            bad.push(c.name);
            capabilities.extend(extra);
        }
    }
    (bad, capabilities.into_iter().collect())
}

pub(super) fn volumes(pod: PodShape<'_>) -> impl Iterator<Item = &Volume> {
    pod.spec.volumes.iter().flatten()
}

/// The seccomp profiles set against `valid`: who set a bad one (pod,
/// containers), the bad types, and the containers that set none while the
/// pod sets no valid one.
pub(super) fn seccomp(
    pod: PodShape<'_>,
    valid: fn(&str) -> bool,
) -> (Vec<String>, Vec<String>, Vec<&str>) {
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    let mut pod_valid = false;
    if let Some(profile) = pod.security().and_then(|s| s.seccomp_profile.as_ref()) {
        if valid(&profile.type_) {
            pod_valid = true;
        } else {
            setters.push("pod".to_owned());
            values.insert(profile.type_.clone());
        }
    }
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for c in containers(pod) {
        match c.security.and_then(|s| s.seccomp_profile.as_ref()) {
            Some(profile) if !valid(&profile.type_) => {
                explicit.push(c.name);
                values.insert(profile.type_.clone());
            }
            Some(_) => {}
            None if !pod_valid => implicit.push(c.name),
            None => {}
        }
    }
    if !explicit.is_empty() {
        setters.push(containers_phrase(&explicit));
    }
    (setters, values.into_iter().collect(), implicit)
}

/// The refusal of seccomp profiles set to a forbidden type.
pub(super) fn bad_seccomp(setters: &[String], values: &[String]) -> Option<(String, String)> {
    found(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters.join(" and "),
            join_quote(values)
        ),
    )
}
