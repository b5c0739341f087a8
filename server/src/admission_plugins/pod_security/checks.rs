//! The checks of the Pod Security Standards (pod-security-admission's
//! `policy` package), in upstream's order (by check id), with its wording.
//! A restricted check that tightens a baseline one replaces it.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{baseline, restricted};

type Check = fn(&Value) -> Option<(String, String)>;

/// The violations of a pod at the baseline level (or the restricted one):
/// reason and detail of each.
pub fn evaluate(restricted: bool, pod: &Value) -> Vec<(String, String)> {
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

/// Every container (init, regular, ephemeral, in that order) with its name.
pub(super) fn containers(pod: &Value) -> impl Iterator<Item = (&str, &Value)> {
    ["initContainers", "containers", "ephemeralContainers"]
        .into_iter()
        .flat_map(move |list| pod["spec"][list].as_array().into_iter().flatten())
        .map(|c| (c["name"].as_str().unwrap_or_default(), c))
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

pub(super) fn is_windows(pod: &Value) -> bool {
    pod["spec"]["os"]["name"] == "windows"
}

pub(super) fn found(reason: &str, detail: String) -> Option<(String, String)> {
    Some((reason.to_owned(), detail))
}

/// The capabilities containers add beyond `allowed`: the containers and the
/// capabilities, sorted.
pub(super) fn added_beyond<'p>(pod: &'p Value, allowed: &[&str]) -> (Vec<&'p str>, Vec<&'p str>) {
    let mut bad = Vec::new();
    let mut capabilities = BTreeSet::new();
    for (name, c) in containers(pod) {
        let added = c["securityContext"]["capabilities"]["add"].as_array();
        let extra: Vec<&str> = added
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|cap| !allowed.contains(cap))
            .collect();
        if !extra.is_empty() {
            bad.push(name);
            capabilities.extend(extra);
        }
    }
    (bad, capabilities.into_iter().collect())
}

pub(super) fn volumes(pod: &Value) -> impl Iterator<Item = &Value> {
    pod["spec"]["volumes"].as_array().into_iter().flatten()
}

/// The seccomp profiles set against `valid`: who set a bad one (pod,
/// containers), the bad types, and the containers that set none while the
/// pod sets no valid one.
pub(super) fn seccomp(
    pod: &Value,
    valid: fn(&str) -> bool,
) -> (Vec<String>, Vec<String>, Vec<&str>) {
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    let pod_profile = &pod["spec"]["securityContext"]["seccompProfile"];
    let mut pod_valid = false;
    if pod_profile.is_object() {
        let t = pod_profile["type"].as_str().unwrap_or_default();
        if valid(t) {
            pod_valid = true;
        } else {
            setters.push("pod".to_owned());
            values.insert(t.to_owned());
        }
    }
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for (name, c) in containers(pod) {
        let profile = &c["securityContext"]["seccompProfile"];
        if profile.is_object() {
            let t = profile["type"].as_str().unwrap_or_default();
            if !valid(t) {
                explicit.push(name);
                values.insert(t.to_owned());
            }
        } else if !pod_valid {
            implicit.push(name);
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
