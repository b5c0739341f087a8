//! The checks of the Pod Security Standards (pod-security-admission's
//! `policy` package), in upstream's order (by check id), with its wording.
//! A restricted check that tightens a baseline one replaces it.

use std::collections::BTreeSet;

use serde_json::Value;

/// The capabilities the baseline level lets containers add.
const BASELINE_CAPABILITIES: &[&str] = &[
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
const SELINUX_TYPES: &[&str] = &[
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

/// The sysctls the baseline level allows (the namespaced, safe set).
const SAFE_SYSCTLS: &[&str] = &[
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

/// The volume types the restricted level allows.
const RESTRICTED_VOLUME_TYPES: &[&str] = &[
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

const APPARMOR_ANNOTATION: &str = "container.apparmor.security.beta.kubernetes.io/";

type Check = fn(&Value) -> Option<(String, String)>;

/// The violations of a pod at the baseline level (or the restricted one),
/// as `reason (detail)` texts.
pub fn evaluate(restricted: bool, pod: &Value) -> Vec<String> {
    let baseline: [(&str, Check); 9] = [
        ("appArmorProfile", app_armor),
        ("capabilities_baseline", capabilities_baseline),
        ("hostNamespaces", host_namespaces),
        ("hostPathVolumes", host_path_volumes),
        ("hostPorts", host_ports),
        ("privileged", privileged),
        ("seLinuxOptions", selinux),
        ("seccompProfile_baseline", seccomp_baseline),
        ("sysctls", sysctls),
    ];
    let tightened: [(&str, Check); 6] = [
        ("allowPrivilegeEscalation", privilege_escalation),
        ("capabilities_restricted", capabilities_restricted),
        ("restrictedVolumes", restricted_volumes),
        ("runAsNonRoot", run_as_non_root),
        ("runAsUser", run_as_user),
        ("seccompProfile_restricted", seccomp_restricted),
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
    checks
        .filter_map(|(_, check)| check(pod))
        .map(|(reason, detail)| format!("{reason} ({detail})"))
        .collect()
}

/// Every container (init, regular, ephemeral, in that order) with its name.
fn containers(pod: &Value) -> impl Iterator<Item = (&str, &Value)> {
    ["initContainers", "containers", "ephemeralContainers"]
        .into_iter()
        .flat_map(move |list| pod["spec"][list].as_array().into_iter().flatten())
        .map(|c| (c["name"].as_str().unwrap_or_default(), c))
}

/// `"a", "b"`: Go's joinQuote (no escaping inside).
fn join_quote<S: AsRef<str>>(items: &[S]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|i| format!("\"{}\"", i.as_ref()))
        .collect();
    quoted.join(", ")
}

fn plural(one: &str, many: &str, count: usize) -> String {
    if count == 1 { one } else { many }.to_owned()
}

/// `container "a"` or `containers "a", "b"`.
fn containers_phrase(names: &[&str]) -> String {
    format!(
        "{} {}",
        plural("container", "containers", names.len()),
        join_quote(names)
    )
}

fn is_windows(pod: &Value) -> bool {
    pod["spec"]["os"]["name"] == "windows"
}

fn found(reason: &str, detail: String) -> Option<(String, String)> {
    Some((reason.to_owned(), detail))
}

fn app_armor(pod: &Value) -> Option<(String, String)> {
    let allowed = |t: &Value| t.is_null() || t == "RuntimeDefault" || t == "Localhost";
    let mut setters = Vec::new();
    let mut values = BTreeSet::new();
    let pod_type = &pod["spec"]["securityContext"]["appArmorProfile"]["type"];
    if !allowed(pod_type) {
        setters.push("pod".to_owned());
        values.insert(pod_type.as_str().unwrap_or_default().to_owned());
    }
    let mut bad = Vec::new();
    for (name, c) in containers(pod) {
        let t = &c["securityContext"]["appArmorProfile"]["type"];
        if !allowed(t) {
            bad.push(name);
            values.insert(t.as_str().unwrap_or_default().to_owned());
        }
    }
    if !bad.is_empty() {
        setters.push(containers_phrase(&bad));
    }
    let mut annotations = 0;
    for (key, value) in pod["metadata"]["annotations"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let value = value.as_str().unwrap_or_default();
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

/// The capabilities containers add beyond `allowed`: the containers and the
/// capabilities, sorted.
fn added_beyond<'p>(pod: &'p Value, allowed: &[&str]) -> (Vec<&'p str>, Vec<&'p str>) {
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

fn capabilities_baseline(pod: &Value) -> Option<(String, String)> {
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

fn capabilities_restricted(pod: &Value) -> Option<(String, String)> {
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

fn host_namespaces(pod: &Value) -> Option<(String, String)> {
    let set: Vec<String> = ["hostNetwork", "hostPID", "hostIPC"]
        .into_iter()
        .filter(|field| pod["spec"][field] == true)
        .map(|field| format!("{field}=true"))
        .collect();
    if set.is_empty() {
        return None;
    }
    found("host namespaces", set.join(", "))
}

fn host_path_volumes(pod: &Value) -> Option<(String, String)> {
    let names: Vec<&str> = volumes(pod)
        .filter(|v| v["hostPath"].is_object())
        .map(|v| v["name"].as_str().unwrap_or_default())
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

fn volumes(pod: &Value) -> impl Iterator<Item = &Value> {
    pod["spec"]["volumes"].as_array().into_iter().flatten()
}

fn host_ports(pod: &Value) -> Option<(String, String)> {
    let mut details = Vec::new();
    for (name, c) in containers(pod) {
        let ports: Vec<String> = c["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["hostPort"].as_i64())
            .filter(|port| *port != 0)
            .map(|port| port.to_string())
            .collect();
        if !ports.is_empty() {
            details.push(format!(
                "container \"{name}\" uses {} {}",
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

fn privileged(pod: &Value) -> Option<(String, String)> {
    let bad: Vec<&str> = containers(pod)
        .filter(|(_, c)| c["securityContext"]["privileged"] == true)
        .map(|(name, _)| name)
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

fn selinux(pod: &Value) -> Option<(String, String)> {
    let mut types = BTreeSet::new();
    let (mut user, mut role) = (false, false);
    let mut inspect = |options: &Value| -> bool {
        if !options.is_object() {
            return false;
        }
        let mut bad = false;
        let t = options["type"].as_str().unwrap_or_default();
        if !SELINUX_TYPES.contains(&t) {
            types.insert(t.to_owned());
            bad = true;
        }
        if options["user"].as_str().is_some_and(|u| !u.is_empty()) {
            user = true;
            bad = true;
        }
        if options["role"].as_str().is_some_and(|r| !r.is_empty()) {
            role = true;
            bad = true;
        }
        bad
    };
    let mut setters = Vec::new();
    if inspect(&pod["spec"]["securityContext"]["seLinuxOptions"]) {
        setters.push("pod".to_owned());
    }
    let bad: Vec<&str> = containers(pod)
        .filter(|(_, c)| inspect(&c["securityContext"]["seLinuxOptions"]))
        .map(|(name, _)| name)
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

/// The seccomp profiles set against `valid`: who set a bad one (pod,
/// containers), the bad types, and the containers that set none while the
/// pod sets no valid one.
fn seccomp(pod: &Value, valid: fn(&str) -> bool) -> (Vec<String>, Vec<String>, Vec<&str>) {
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

fn seccomp_baseline(pod: &Value) -> Option<(String, String)> {
    let (setters, values, _) = seccomp(pod, |t| t != "Unconfined");
    if setters.is_empty() {
        return None;
    }
    bad_seccomp(&setters, &values)
}

fn seccomp_restricted(pod: &Value) -> Option<(String, String)> {
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

/// The refusal of seccomp profiles set to a forbidden type.
fn bad_seccomp(setters: &[String], values: &[String]) -> Option<(String, String)> {
    found(
        "seccompProfile",
        format!(
            "{} must not set securityContext.seccompProfile.type to {}",
            setters.join(" and "),
            join_quote(values)
        ),
    )
}

fn sysctls(pod: &Value) -> Option<(String, String)> {
    let forbidden: Vec<&str> = pod["spec"]["securityContext"]["sysctls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["name"].as_str())
        .filter(|name| !SAFE_SYSCTLS.contains(name))
        .collect();
    if forbidden.is_empty() {
        return None;
    }
    found("forbidden sysctls", forbidden.join(", "))
}

fn privilege_escalation(pod: &Value) -> Option<(String, String)> {
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

fn restricted_volumes(pod: &Value) -> Option<(String, String)> {
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

fn run_as_non_root(pod: &Value) -> Option<(String, String)> {
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

fn run_as_user(pod: &Value) -> Option<(String, String)> {
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
