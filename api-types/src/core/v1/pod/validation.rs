//! The checks of `ValidatePodSpec` (pkg/apis/core/validation) that span
//! fields: unique container and volume names, one source per volume, mounts of
//! existing volumes, ports, probes by container type, and the pod-wide fields.
//! The field rules (`#[api(...)]` on the structs) cover single values.

mod affinity;
mod env;
mod extras;
mod resources;
mod update;
mod volume_drivers;
mod volume_files;
mod volume_sources;

use std::collections::BTreeSet;

use kapi_runtime::validation::{
    FieldErrors, FieldPath, inclusive_range_error, label_value_errors, port_name_errors,
    port_number_errors,
};

pub(crate) use crate::core::v1::validation::resource_names::container_resource_name;
pub(crate) use affinity::{validate_affinity, validate_node_selector};
pub(crate) use env::{validate_config_map_key, validate_env_var, validate_secret_key};
pub(crate) use extras::{validate_pod_security, validate_security, validate_template};
pub(crate) use resources::validate_resources;
pub(crate) use update::{validate_ephemeral_containers_update, validate_pod, validate_pod_update};
pub(crate) use volume_drivers::{
    initiator_format_error, validate_fc, validate_flocker, validate_quobyte,
};
pub(crate) use volume_sources::{
    azure_disk_source, csi_driver_name, flex_options, gce_disk_source, host_path_source,
    nfs_source, no_backsteps, partition,
};

use super::affinity::Toleration;
use super::container::{Container, ContainerPort, VolumeMount};
use super::probe::{
    ExecAction, GRPCAction, HTTPGetAction, LifecycleHandler, Probe, TCPSocketAction,
};
use super::spec::PodSpec;
use super::volume::Volume;
use crate::validation::{label_name, port_num_or_name, validate_labels};

const SIDECAR_ONLY: &str = "may not be set for init containers without restartPolicy=Always";

/// The `PodSpec` hook.
pub(crate) fn validate_pod_spec(spec: &PodSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let volumes = validate_volumes(spec.volumes.as_deref().unwrap_or_default(), path, errs);
    let containers_path = path.child("containers");
    let mut names = BTreeSet::new();
    for (i, container) in spec.containers.iter().enumerate() {
        let item = containers_path.index(i);
        validate_container(container, &volumes, &item, errs);
        if !names.insert(container.name.as_str()) {
            errs.duplicate(item.child("name"), container.name.as_str());
        }
        lifecycle_probes(container, &item, errs);
        if container.restart_policy.is_some() {
            errs.forbidden(
                item.child("restartPolicy"),
                "may not be set for non-init containers",
            );
        }
    }
    let init_path = path.child("initContainers");
    for (i, container) in spec.init_containers.iter().flatten().enumerate() {
        let item = init_path.index(i);
        validate_container(container, &volumes, &item, errs);
        if names.contains(container.name.as_str()) {
            errs.duplicate(item.child("name"), container.name.as_str());
        } else if !container.name.is_empty() {
            names.insert(container.name.as_str());
        }
        if container.restart_policy.as_deref() == Some("Always") {
            lifecycle_probes(container, &item, errs);
        } else {
            let set = [
                ("lifecycle", container.lifecycle.is_some()),
                ("livenessProbe", container.liveness_probe.is_some()),
                ("readinessProbe", container.readiness_probe.is_some()),
                ("startupProbe", container.startup_probe.is_some()),
            ];
            for (field, _) in set.into_iter().filter(|(_, set)| *set) {
                errs.forbidden(item.child(field), SIDECAR_ONLY);
            }
        }
    }
    for (i, ephemeral) in spec.ephemeral_containers.iter().flatten().enumerate() {
        let item = path.child("ephemeralContainers").index(i);
        if !ephemeral.name.is_empty() && !names.insert(ephemeral.name.as_str()) {
            errs.duplicate(item.child("name"), ephemeral.name.as_str());
        }
    }
    if let Some(seconds) = spec.active_deadline_seconds
        && !(1..=i64::from(i32::MAX)).contains(&seconds)
    {
        errs.invalid(
            path.child("activeDeadlineSeconds"),
            seconds,
            &inclusive_range_error(1, i64::from(i32::MAX)),
        );
    }
    validate_labels(
        spec.node_selector.as_ref(),
        &path.child("nodeSelector"),
        errs,
    );
    extras::host_port_conflicts(&spec.containers, &containers_path, errs);
    for container in spec.init_containers.iter().flatten() {
        // Init containers run one by one: each is checked alone (and, as
        // upstream does, reported as the list's first element).
        extras::host_port_conflicts(std::slice::from_ref(container), &init_path, errs);
    }
    extras::pod_fields(spec, path, errs);
}

/// `ValidateVolumes`: unique names, one source each and that source's own
/// checks; returns the names of the volumes without errors, the ones
/// containers may mount.
fn validate_volumes<'a>(
    volumes: &'a [Volume],
    path: &FieldPath,
    errs: &mut FieldErrors,
) -> BTreeSet<&'a str> {
    let mut valid = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for (i, volume) in volumes.iter().enumerate() {
        let item = path.child("volumes").index(i);
        let sources = volume_sources(volume);
        if let Some(first) = sources.first() {
            volume_sources::validate_volume_source(volume, first, &item, errs);
        }
        for extra in sources.iter().skip(1) {
            errs.forbidden(item.child(extra), "may not specify more than 1 volume type");
        }
        if sources.is_empty() {
            errs.required(item.clone(), "must specify a volume type");
        }
        if !seen.insert(volume.name.as_str()) {
            errs.duplicate(item.child("name"), volume.name.as_str());
        }
        let name_ok = !volume.name.is_empty()
            && kapi_runtime::validation::dns1123_label_errors(&volume.name).is_empty();
        // Containers may mount a volume without errors, the field rules' ones
        // included (they ran before this hook).
        let prefix = item.as_str();
        let clean = !errs.0.iter().any(|e| {
            e.path
                .as_str()
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        });
        if clean && name_ok {
            valid.insert(volume.name.as_str());
        }
    }
    valid
}

/// The sources set on a volume, by the field names upstream's errors use, in
/// the order upstream checks them (the first one is kept, the others are
/// reported).
fn volume_sources(v: &Volume) -> Vec<&'static str> {
    let candidates = [
        ("emptyDir", v.empty_dir.is_some()),
        ("hostPath", v.host_path.is_some()),
        ("gitRepo", v.git_repo.is_some()),
        ("gcePersistentDisk", v.gce_persistent_disk.is_some()),
        ("awsElasticBlockStore", v.aws_elastic_block_store.is_some()),
        ("secret", v.secret.is_some()),
        ("nfs", v.nfs.is_some()),
        ("iscsi", v.iscsi.is_some()),
        ("glusterfs", v.glusterfs.is_some()),
        ("flocker", v.flocker.is_some()),
        ("persistentVolumeClaim", v.persistent_volume_claim.is_some()),
        ("rbd", v.rbd.is_some()),
        ("cinder", v.cinder.is_some()),
        // Upstream's spelling of these two paths.
        ("cephFS", v.cephfs.is_some()),
        ("quobyte", v.quobyte.is_some()),
        ("downwarAPI", v.downward_api.is_some()),
        ("fc", v.fc.is_some()),
        ("flexVolume", v.flex_volume.is_some()),
        ("configMap", v.config_map.is_some()),
        ("azureFile", v.azure_file.is_some()),
        ("vsphereVolume", v.vsphere_volume.is_some()),
        ("photonPersistentDisk", v.photon_persistent_disk.is_some()),
        ("portworxVolume", v.portworx_volume.is_some()),
        ("azureDisk", v.azure_disk.is_some()),
        ("storageos", v.storageos.is_some()),
        ("projected", v.projected.is_some()),
        ("scaleIO", v.scale_io.is_some()),
        ("csi", v.csi.is_some()),
        ("ephemeral", v.ephemeral.is_some()),
        ("image", v.image.is_some()),
    ];
    candidates
        .into_iter()
        .filter(|(_, set)| *set)
        .map(|(name, _)| name)
        .collect()
}

/// `validateContainerCommon`, the checks every container type shares.
fn validate_container(
    container: &Container,
    volumes: &BTreeSet<&str>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    validate_ports(container.ports.as_deref().unwrap_or_default(), path, errs);
    env::validate_env_from(container, path, errs);
    validate_mounts(
        container.volume_mounts.as_deref().unwrap_or_default(),
        volumes,
        path,
        errs,
    );
}

/// `validateContainerPorts`.
fn validate_ports(ports: &[ContainerPort], path: &FieldPath, errs: &mut FieldErrors) {
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let item = path.child("ports").index(i);
        if let Some(name) = port.name.as_deref().filter(|n| !n.is_empty()) {
            let problems = port_name_errors(name);
            for detail in &problems {
                errs.invalid(item.child("name"), name, detail);
            }
            if problems.is_empty() && !names.insert(name) {
                errs.duplicate(item.child("name"), name);
            }
        }
        if port.container_port == 0 {
            errs.required(item.child("containerPort"), "");
        } else {
            for detail in port_number_errors(i64::from(port.container_port)) {
                errs.invalid(item.child("containerPort"), port.container_port, &detail);
            }
        }
        if let Some(host_port) = port.host_port.filter(|p| *p != 0) {
            for detail in port_number_errors(i64::from(host_port)) {
                errs.invalid(item.child("hostPort"), host_port, &detail);
            }
        }
        match port.protocol.as_deref().unwrap_or_default() {
            "" => errs.required(item.child("protocol"), ""),
            "TCP" | "UDP" | "SCTP" => {}
            other => errs.not_supported(item.child("protocol"), other, &["SCTP", "TCP", "UDP"]),
        }
    }
}

/// `ValidateVolumeMounts`: each mount names a valid volume of the pod, and no
/// two mounts share a path.
fn validate_mounts(
    mounts: &[VolumeMount],
    volumes: &BTreeSet<&str>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let mut paths = BTreeSet::new();
    for (i, mount) in mounts.iter().enumerate() {
        let item = path.child("volumeMounts").index(i);
        if !volumes.contains(mount.name.as_str()) {
            errs.not_found(item.child("name"), mount.name.as_str());
        }
        if !paths.insert(mount.mount_path.as_str()) {
            errs.invalid(
                item.child("mountPath"),
                mount.mount_path.as_str(),
                "must be unique",
            );
        }
        if mount
            .sub_path_expr
            .as_deref()
            .is_some_and(|e| !e.is_empty())
            && mount.sub_path.as_deref().is_some_and(|p| !p.is_empty())
        {
            errs.invalid(
                item.child("subPathExpr"),
                mount.sub_path_expr.as_deref().unwrap_or_default(),
                "subPathExpr and subPath are mutually exclusive",
            );
        }
    }
}

/// The probe rules of a regular container or a sidecar (an init container's
/// probes and hooks are only forbidden): one handler per probe and hook,
/// liveness and startup probes must succeed once, a readiness probe has no
/// grace period.
fn lifecycle_probes(container: &Container, path: &FieldPath, errs: &mut FieldErrors) {
    if let Some(lifecycle) = &container.lifecycle {
        let hooks = [
            ("postStart", &lifecycle.post_start),
            ("preStop", &lifecycle.pre_stop),
        ];
        for (field, hook) in hooks {
            if let Some(hook) = hook {
                lifecycle_handler(hook, &path.child("lifecycle").child(field), errs);
            }
        }
    }
    let probes = [
        ("livenessProbe", &container.liveness_probe),
        ("readinessProbe", &container.readiness_probe),
        ("startupProbe", &container.startup_probe),
    ];
    for (field, probe) in probes {
        if let Some(probe) = probe {
            validate_probe(probe, &path.child(field), errs);
        }
    }
    let once = [
        ("livenessProbe", &container.liveness_probe),
        ("startupProbe", &container.startup_probe),
    ];
    for (field, probe) in once {
        if let Some(probe) = probe
            && probe.success_threshold.unwrap_or_default() != 1
        {
            let threshold = probe.success_threshold.unwrap_or_default();
            errs.invalid(
                path.child(field).child("successThreshold"),
                threshold,
                "must be 1",
            );
        }
    }
    if let Some(grace) = container
        .readiness_probe
        .as_ref()
        .and_then(|p| p.termination_grace_period_seconds)
    {
        errs.invalid(
            path.child("readinessProbe")
                .child("terminationGracePeriodSeconds"),
            grace,
            "must not be set for readinessProbes",
        );
    }
}

/// `validateExecAction`: a command to run.
fn exec_command(exec: Option<&ExecAction>, path: &FieldPath, errs: &mut FieldErrors) {
    if exec.is_some_and(|e| e.command.as_ref().is_none_or(Vec::is_empty)) {
        errs.required(path.child("exec").child("command"), "");
    }
}

/// `validateHandler` over the handlers set, in upstream's order: exactly one.
fn one_handler(set: &[(&str, bool)], path: &FieldPath, errs: &mut FieldErrors) {
    let mut count = 0;
    for (field, _) in set.iter().filter(|(_, set)| *set) {
        if count > 0 {
            errs.forbidden(
                path.child(field),
                "may not specify more than 1 handler type",
            );
        } else {
            count += 1;
        }
    }
    if count == 0 {
        errs.required(path.clone(), "must specify a handler type");
    }
}

/// `validateProbe`: one handler, a positive grace period when set.
fn validate_probe(probe: &Probe, path: &FieldPath, errs: &mut FieldErrors) {
    let handlers = [
        ("exec", probe.exec.is_some()),
        ("httpGet", probe.http_get.is_some()),
        ("tcpSocket", probe.tcp_socket.is_some()),
        ("grpc", probe.grpc.is_some()),
    ];
    one_handler(&handlers, path, errs);
    exec_command(probe.exec.as_ref(), path, errs);
    if let Some(grace) = probe.termination_grace_period_seconds
        && grace <= 0
    {
        errs.invalid(
            path.child("terminationGracePeriodSeconds"),
            grace,
            "must be greater than 0",
        );
    }
}

/// `validateLifecycle` of one hook: one handler.
fn lifecycle_handler(handler: &LifecycleHandler, path: &FieldPath, errs: &mut FieldErrors) {
    let handlers = [
        ("exec", handler.exec.is_some()),
        ("httpGet", handler.http_get.is_some()),
        ("tcpSocket", handler.tcp_socket.is_some()),
        ("sleep", handler.sleep.is_some()),
    ];
    one_handler(&handlers, path, errs);
    exec_command(handler.exec.as_ref(), path, errs);
}

/// The `HTTPGetAction` hook: the port is a number or a port name, header
/// names are HTTP header names.
pub(crate) fn validate_http_get(action: &HTTPGetAction, path: &FieldPath, errs: &mut FieldErrors) {
    port_num_or_name(&action.port, &path.child("port"), errs);
    for header in action.http_headers.iter().flatten() {
        let name_ok = !header.name.is_empty()
            && header
                .name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-');
        if !name_ok {
            errs.invalid(
                path.child("httpHeaders"),
                header.name.as_str(),
                "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. \
                 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
            );
        }
    }
}

/// The `TCPSocketAction` hook: the port is a number or a port name.
pub(crate) fn validate_tcp_socket(
    action: &TCPSocketAction,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    port_num_or_name(&action.port, &path.child("port"), errs);
}

/// The `GRPCAction` hook: a port number.
pub(crate) fn validate_grpc(action: &GRPCAction, path: &FieldPath, errs: &mut FieldErrors) {
    for detail in port_number_errors(i64::from(action.port)) {
        errs.invalid(path.child("port"), action.port, &detail);
    }
}

/// The `Toleration` hook (`ValidateTolerations`).
pub(crate) fn validate_toleration(t: &Toleration, path: &FieldPath, errs: &mut FieldErrors) {
    let key = t.key.as_deref().unwrap_or_default();
    let operator = t.operator.as_deref().unwrap_or_default();
    let value = t.value.as_deref().unwrap_or_default();
    let effect = t.effect.as_deref().unwrap_or_default();
    if !key.is_empty() {
        label_name(key, &path.child("key"), errs);
    }
    if key.is_empty() && operator != "Exists" {
        errs.invalid(
            path.child("operator"),
            operator,
            "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
        );
    }
    if t.toleration_seconds.is_some() && effect != "NoExecute" {
        errs.invalid(
            path.child("effect"),
            effect,
            "effect must be 'NoExecute' when `tolerationSeconds` is set",
        );
    }
    match operator {
        "Equal" | "" => {
            let problems = label_value_errors(value);
            if !problems.is_empty() {
                errs.invalid(path.child("operator"), value, &problems.join(";"));
            }
        }
        "Exists" if !value.is_empty() => errs.invalid(
            path.child("operator"),
            value,
            "value must be empty when `operator` is 'Exists'",
        ),
        "Exists" => {}
        other => errs.not_supported(path.child("operator"), other, &["Equal", "Exists"]),
    }
}
