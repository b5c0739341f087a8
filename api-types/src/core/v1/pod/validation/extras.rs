//! The pod-wide checks of `ValidatePodSpec` beyond containers and volumes:
//! host ports, DNS config, gates, topology spread, host aliases, names of
//! referenced objects, security contexts, and a template's own labels.

use std::collections::BTreeSet;
use std::net::IpAddr;

use kapi_runtime::validation::{
    FieldErrors, FieldPath, inclusive_range_error, qualified_name_errors,
};

use crate::core::v1::pod::container::Container;
use crate::core::v1::pod::security::{PodSecurityContext, SecurityContext};
use crate::core::v1::pod::spec::{PodSpec, PodTemplateSpec};
use crate::validation::{dns1123_subdomain, label_name, validate_label_selector, validate_labels};

/// `ValidateQualifiedName`.
fn qualified_name(value: &str, path: &FieldPath, errs: &mut FieldErrors) {
    for detail in qualified_name_errors(value) {
        errs.invalid(path.clone(), value, &detail);
    }
}

/// `checkHostPortConflicts`: a protocol, host IP and host port taken once.
pub(super) fn host_port_conflicts(
    containers: &[Container],
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let mut taken = BTreeSet::new();
    for (ci, container) in containers.iter().enumerate() {
        for (pi, port) in container.ports.iter().flatten().enumerate() {
            let Some(host_port) = port.host_port.filter(|p| *p != 0) else {
                continue;
            };
            let key = format!(
                "{}/{}/{host_port}",
                port.protocol.as_deref().unwrap_or_default(),
                port.host_ip.as_deref().unwrap_or_default()
            );
            if taken.contains(&key) {
                let port_path = path.index(ci).child("ports").index(pi).child("hostPort");
                errs.duplicate(port_path, key.as_str());
            } else {
                taken.insert(key);
            }
        }
    }
}

/// The pod-wide fields of the `PodSpec` hook.
pub(super) fn pod_fields(spec: &PodSpec, path: &FieldPath, errs: &mut FieldErrors) {
    dns_config(spec, path, errs);
    for (i, gate) in spec.readiness_gates.iter().flatten().enumerate() {
        let gate_path = path.child("readinessGates").index(i).child("conditionType");
        qualified_name(&gate.condition_type, &gate_path, errs);
    }
    let mut gates = BTreeSet::new();
    for (i, gate) in spec.scheduling_gates.iter().flatten().enumerate() {
        let gate_path = path.child("schedulingGates").index(i);
        qualified_name(&gate.name, &gate_path, errs);
        if !gates.insert(gate.name.as_str()) {
            errs.duplicate(gate_path, gate.name.as_str());
        }
    }
    let constraints = spec
        .topology_spread_constraints
        .as_deref()
        .unwrap_or_default();
    for (i, c) in constraints.iter().enumerate() {
        let item = path.child("topologySpreadConstraints").index(i);
        if c.max_skew <= 0 {
            errs.invalid(
                item.child("maxSkew"),
                c.max_skew,
                "must be greater than zero",
            );
        }
        if c.topology_key.is_empty() {
            errs.required(item.child("topologyKey"), "can not be empty");
        } else {
            label_name(&c.topology_key, &item.child("topologyKey"), errs);
        }
        if !matches!(
            c.when_unsatisfiable.as_str(),
            "DoNotSchedule" | "ScheduleAnyway"
        ) {
            errs.not_supported(
                item.child("whenUnsatisfiable"),
                &c.when_unsatisfiable,
                &["DoNotSchedule", "ScheduleAnyway"],
            );
        }
        if let Some(min) = c.min_domains {
            if min <= 0 {
                errs.invalid(item.child("minDomains"), min, "must be greater than zero");
            }
            if c.when_unsatisfiable != "DoNotSchedule" {
                let detail = format!(
                    "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {}",
                    c.when_unsatisfiable
                );
                errs.invalid(item.child("minDomains"), min, &detail);
            }
        }
        // Reported on the first of two constraints with the same pair.
        let pair = (&c.topology_key, &c.when_unsatisfiable);
        if constraints[i + 1..]
            .iter()
            .any(|later| (&later.topology_key, &later.when_unsatisfiable) == pair)
        {
            errs.duplicate(
                item.child("{topologyKey, whenUnsatisfiable}"),
                format!("{{{}, {}}}", c.topology_key, c.when_unsatisfiable),
            );
        }
        super::affinity::spread_match_label_keys(
            c.match_label_keys.as_deref().unwrap_or_default(),
            c.label_selector.as_ref(),
            &item.child("matchLabelKeys"),
            errs,
        );
        if let Some(selector) = &c.label_selector {
            validate_label_selector(selector, &item.child("labelSelector"), errs);
        }
    }
    for (i, alias) in spec.host_aliases.iter().flatten().enumerate() {
        let item = path.child("hostAliases").index(i);
        if alias.ip.parse::<IpAddr>().is_err() {
            errs.invalid(
                item.child("ip"),
                alias.ip.as_str(),
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            );
        }
        for (j, name) in alias.hostnames.iter().flatten().enumerate() {
            dns1123_subdomain(name, &item.child("hostnames").index(j), errs);
        }
    }
    let names = [
        ("serviceAccountName", &spec.service_account_name),
        ("nodeName", &spec.node_name),
        ("priorityClassName", &spec.priority_class_name),
    ];
    for (field, value) in names {
        if let Some(name) = value.as_deref().filter(|n| !n.is_empty()) {
            dns1123_subdomain(name, &path.child(field), errs);
        }
    }
    let gated = spec
        .scheduling_gates
        .as_ref()
        .is_some_and(|g| !g.is_empty());
    if gated && spec.node_name.as_deref().is_some_and(|n| !n.is_empty()) {
        errs.forbidden(
            path.child("nodeName"),
            "cannot be set until all schedulingGates have been cleared",
        );
    }
}

/// `validatePodDNSConfig`.
fn dns_config(spec: &PodSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let config_path = path.child("dnsConfig");
    let config = spec.dns_config.as_ref();
    if spec.dns_policy.as_deref() == Some("None") {
        let Some(config) = config else {
            errs.required(
                config_path,
                "must provide `dnsConfig` when `dnsPolicy` is None",
            );
            return;
        };
        if config.nameservers.as_ref().is_none_or(|n| n.is_empty()) {
            errs.required(
                config_path.child("nameservers"),
                "must provide at least one DNS nameserver when `dnsPolicy` is None",
            );
            return;
        }
    }
    let Some(config) = config else {
        return;
    };
    let servers = config.nameservers.as_deref().unwrap_or_default();
    if servers.len() > 3 {
        errs.invalid(
            config_path.child("nameservers"),
            crate::validation::GoStrings(Some(servers)),
            "must not have more than 3 nameservers",
        );
    }
    for (i, server) in servers.iter().enumerate() {
        if server.parse::<IpAddr>().is_err() {
            errs.invalid(
                config_path.child("nameservers").index(i),
                server.as_str(),
                "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            );
        }
    }
    for (i, option) in config.options.iter().flatten().enumerate() {
        if option.name.as_deref().unwrap_or_default().is_empty() {
            errs.required(
                config_path.child("options").index(i),
                "Option.Name must not be empty",
            );
        }
    }
}

/// User and group ids are 0 to 2^31-1.
fn id(value: Option<i64>, path: &FieldPath, errs: &mut FieldErrors) {
    let max = i64::from(i32::MAX);
    if let Some(n) = value
        && !(0..=max).contains(&n)
    {
        errs.invalid(path.clone(), n, &inclusive_range_error(0, max));
    }
}

/// The sysctl names a pod may set (`IsValidSysctlName`).
fn is_sysctl_name(name: &str) -> bool {
    let segment_ok = |s: &str| {
        let b = s.as_bytes();
        let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        !b.is_empty()
            && alnum(b[0])
            && alnum(b[b.len() - 1])
            && b.iter().all(|&c| alnum(c) || c == b'-' || c == b'_')
    };
    name.len() <= 253 && name.split(['.', '/']).all(segment_ok)
}

/// The `PodSecurityContext` hook: ids in range, sysctl names.
pub(crate) fn validate_pod_security(
    ctx: &PodSecurityContext,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    id(ctx.fs_group, &path.child("fsGroup"), errs);
    id(ctx.run_as_user, &path.child("runAsUser"), errs);
    id(ctx.run_as_group, &path.child("runAsGroup"), errs);
    for (i, group) in ctx.supplemental_groups.iter().flatten().enumerate() {
        id(
            Some(*group),
            &path.child("supplementalGroups").index(i),
            errs,
        );
    }
    for (i, sysctl) in ctx.sysctls.iter().flatten().enumerate() {
        if !sysctl.name.is_empty() && !is_sysctl_name(&sysctl.name) {
            errs.invalid(
                path.child("sysctls").index(i).child("name"),
                sysctl.name.as_str(),
                "must have at most 253 characters and match regex \
                 ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$",
            );
        }
    }
}

/// The `SecurityContext` hook: ids in range. (Upstream's check of
/// `privileged` with `allowPrivilegeEscalation: false` prints Go pointers and
/// is not reproduced.)
pub(crate) fn validate_security(ctx: &SecurityContext, path: &FieldPath, errs: &mut FieldErrors) {
    id(ctx.run_as_user, &path.child("runAsUser"), errs);
    id(ctx.run_as_group, &path.child("runAsGroup"), errs);
}

/// The `PodTemplateSpec` hook (`ValidatePodTemplateSpec`): the template's
/// labels and annotation keys, reported under `labels` and `annotations`
/// directly, as upstream does; no ephemeral containers.
pub(crate) fn validate_template(
    template: &PodTemplateSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    validate_labels(
        template.metadata.labels.as_ref(),
        &path.child("labels"),
        errs,
    );
    if template
        .spec
        .ephemeral_containers
        .as_ref()
        .is_some_and(|e| !e.is_empty())
    {
        errs.forbidden(
            path.child("spec").child("ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        );
    }
    for key in template
        .metadata
        .annotations
        .iter()
        .flatten()
        .map(|(k, _)| k)
    {
        for detail in qualified_name_errors(&key.to_lowercase()) {
            errs.invalid(path.child("annotations"), key.as_str(), &detail);
        }
    }
}
