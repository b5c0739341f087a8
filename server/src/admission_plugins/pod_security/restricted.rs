//! The checks the restricted level adds.

use std::collections::BTreeSet;

use serde_json::Value;

use super::checks::{
    added_beyond, bad_seccomp, containers, containers_phrase, found, is_windows, join_quote,
    plural, seccomp, volumes,
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

pub(super) fn capabilities_restricted(pod: &Value) -> Option<(String, String)> {
    if is_windows(pod) {
        return None;
    }
    let not_dropping: Vec<&str> = containers(pod)
        .filter(|(_, c)| {
            let drop = c["securityContext"]["capabilities"]["drop"].as_array();
            !drop.into_iter().flatten().any(|d| d == "ALL")
        })
        .map(|(name, _)| name)
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

pub(super) fn seccomp_restricted(pod: &Value) -> Option<(String, String)> {
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

pub(super) fn privilege_escalation(pod: &Value) -> Option<(String, String)> {
    if is_windows(pod) {
        return None;
    }
    let bad: Vec<&str> = containers(pod)
        .filter(|(_, c)| c["securityContext"]["allowPrivilegeEscalation"] != false)
        .map(|(name, _)| name)
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

pub(super) fn restricted_volumes(pod: &Value) -> Option<(String, String)> {
    let mut names = Vec::new();
    let mut types = BTreeSet::new();
    for volume in volumes(pod) {
        let source = volume
            .as_object()
            .and_then(|v| v.keys().find(|k| k.as_str() != "name"))
            .map_or("unknown", String::as_str);
        if !RESTRICTED_VOLUME_TYPES.contains(&source) {
            names.push(volume["name"].as_str().unwrap_or_default());
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

pub(super) fn run_as_non_root(pod: &Value) -> Option<(String, String)> {
    let mut setters = Vec::new();
    let pod_value = &pod["spec"]["securityContext"]["runAsNonRoot"];
    if *pod_value == false {
        setters.push("pod".to_owned());
    }
    let (mut explicit, mut implicit) = (Vec::new(), Vec::new());
    for (name, c) in containers(pod) {
        match &c["securityContext"]["runAsNonRoot"] {
            Value::Bool(false) => explicit.push(name),
            Value::Bool(true) => {}
            _ if *pod_value != true => implicit.push(name),
            _ => {}
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

pub(super) fn run_as_user(pod: &Value) -> Option<(String, String)> {
    let mut setters = Vec::new();
    if pod["spec"]["securityContext"]["runAsUser"] == 0 {
        setters.push("pod".to_owned());
    }
    let bad: Vec<&str> = containers(pod)
        .filter(|(_, c)| c["securityContext"]["runAsUser"] == 0)
        .map(|(name, _)| name)
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
