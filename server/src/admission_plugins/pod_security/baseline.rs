//! The checks of the baseline level.

use std::collections::BTreeSet;

use kapi_api_types::core::v1::pod::security::SELinuxOptions;

use super::checks::{
    PodShape, added_beyond, bad_seccomp, containers, containers_phrase, found, join_quote, plural,
    seccomp, volumes,
};

/// The capabilities the baseline level lets containers add.
pub(super) const BASELINE_CAPABILITIES: &[&str] = &[
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

/// The SELinux types the baseline level allows.
pub(super) const SELINUX_TYPES: &[&str] = &[
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

/// The sysctls the baseline level allows (the namespaced, safe set).
pub(super) const SAFE_SYSCTLS: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ping_group_range",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.tcp_wmem",
];

pub(super) const APPARMOR_ANNOTATION: &str = "container.apparmor.security.beta.kubernetes.io/";

pub(super) fn app_armor(pod: PodShape<'_>) -> Option<(String, String)> {
    let allowed = |t: &str| t == "RuntimeDefault" || t == "Localhost";
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    if let Some(profile) = pod.security().and_then(|s| s.app_armor_profile.as_ref())
        && !allowed(&profile.type_)
    {
        setters.push("pod".to_owned());
        values.insert(profile.type_.clone());
    }
    let mut bad = Vec::new();
    for c in containers(pod) {
        if let Some(profile) = c.security.and_then(|s| s.app_armor_profile.as_ref())
            && !allowed(&profile.type_)
        {
            bad.push(c.name);
            values.insert(profile.type_.clone());
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    let mut annotations = 0;
    for (key, value) in pod.metadata.annotations.iter().flatten() {
        if key.starts_with(APPARMOR_ANNOTATION)
            && !(value.is_empty() || value == "runtime/default" || value.starts_with("localhost/"))
        {
            annotations += 1;
            values.insert(format!("{key}=\"{value}\""));
        }
    }
    if annotations > 0 {
        setters.push(plural("annotation", "annotations", annotations));
    }
    if setters.is_empty() {
        return None;
    }
    let values: Vec<String> = values.into_iter().collect();
    let reason = plural(
        "forbidden AppArmor profile",
        "forbidden AppArmor profiles",
        values.len(),
    );
    found(
        &reason,
        format!(
            "{} must not set AppArmor profile type to {}",
            setters.join(" and "),
            join_quote(&values)
        ),
    )
}

pub(super) fn capabilities_baseline(pod: PodShape<'_>) -> Option<(String, String)> {
    let (bad, capabilities) = added_beyond(pod, BASELINE_CAPABILITIES);
    if bad.is_empty() {
        return None;
    }
    found(
        "non-default capabilities",
        format!(
            "{} must not include {} in securityContext.capabilities.add",
            containers_phrase(&bad),
            join_quote(&capabilities)
        ),
    )
}

pub(super) fn host_namespaces(pod: PodShape<'_>) -> Option<(String, String)> {
    let spec = pod.spec;
    let set: Vec<String> = [
        ("hostNetwork", spec.host_network),
        ("hostPID", spec.host_pid),
        ("hostIPC", spec.host_ipc),
    ]
    .into_iter()
    .filter(|(_, on)| *on == Some(true))
    .map(|(field, _)| format!("{field}=true"))
    .collect();
    if set.is_empty() {
        return None;
    }
    found("host namespaces", set.join(", "))
}

pub(super) fn host_path_volumes(pod: PodShape<'_>) -> Option<(String, String)> {
    let names: Vec<&str> = volumes(pod)
        .filter(|v| v.host_path.is_some())
        .map(|v| v.name.as_str())
        .collect();
    if names.is_empty() {
        return None;
    }
    found(
        "hostPath volumes",
        format!(
            "{} {}",
            plural("volume", "volumes", names.len()),
            join_quote(&names)
        ),
    )
}

pub(super) fn host_ports(pod: PodShape<'_>) -> Option<(String, String)> {
    let mut details = Vec::new();
    for c in containers(pod) {
        let ports: Vec<String> = c
            .ports
            .iter()
            .filter_map(|p| p.host_port)
            .filter(|port| *port != 0)
            .map(|port| port.to_string())
            .collect();
        if !ports.is_empty() {
            details.push(format!(
                "container \"{}\" uses {} {}",
                c.name,
                plural("hostPort", "hostPorts", ports.len()),
                ports.join(", ")
            ));
        }
    }
    if details.is_empty() {
        return None;
    }
    found("hostPort", details.join("; "))
}

pub(super) fn privileged(pod: PodShape<'_>) -> Option<(String, String)> {
    let bad: Vec<&str> = containers(pod)
        .filter(|c| c.security.and_then(|s| s.privileged) == Some(true))
        .map(|c| c.name)
        .collect();
    if bad.is_empty() {
        return None;
    }
    found(
        "privileged",
        format!(
            "{} must not set securityContext.privileged=true",
            containers_phrase(&bad)
        ),
    )
}

pub(super) fn selinux(pod: PodShape<'_>) -> Option<(String, String)> {
    let mut types = BTreeSet::new();
    let (mut user, mut role) = (false, false);
    let mut inspect = |options: Option<&SELinuxOptions>| -> bool {
        let Some(options) = options else {
            return false;
        };
        let mut bad = false;
        let t = options.type_.as_deref().unwrap_or_default();
        if !SELINUX_TYPES.contains(&t) {
            types.insert(t.to_owned());
            bad = true;
        }
        if options.user.as_deref().is_some_and(|u| !u.is_empty()) {
            user = true;
            bad = true;
        }
        if options.role.as_deref().is_some_and(|r| !r.is_empty()) {
            role = true;
            bad = true;
        }
        bad
    };
    let mut setters = Vec::new();
    if inspect(pod.security().and_then(|s| s.se_linux_options.as_ref())) {
        setters.push("pod".to_owned());
    }
    let bad: Vec<&str> = containers(pod)
        .filter(|c| inspect(c.security.and_then(|s| s.se_linux_options.as_ref())))
        .map(|c| c.name)
        .collect();
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    if setters.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if !types.is_empty() {
        let types: Vec<String> = types.into_iter().collect();
        parts.push(format!(
            "{} {}",
            plural("type", "types", types.len()),
            join_quote(&types)
        ));
    }
    if user {
        parts.push("user may not be set".to_owned());
    }
    if role {
        parts.push("role may not be set".to_owned());
    }
    found(
        "seLinuxOptions",
        format!(
            "{} set forbidden securityContext.seLinuxOptions: {}",
            setters.join(" and "),
            parts.join("; ")
        ),
    )
}

pub(super) fn seccomp_baseline(pod: PodShape<'_>) -> Option<(String, String)> {
    let (setters, values, _) = seccomp(pod, |t| t != "Unconfined");
    if setters.is_empty() {
        return None;
    }
    bad_seccomp(&setters, &values)
}

pub(super) fn sysctls(pod: PodShape<'_>) -> Option<(String, String)> {
    let forbidden: Vec<&str> = pod
        .security()
        .and_then(|s| s.sysctls.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|s| s.name.as_str())
        .filter(|name| !SAFE_SYSCTLS.contains(name))
        .collect();
    if forbidden.is_empty() {
        return None;
    }
    found("forbidden sysctls", forbidden.join(", "))
}
