//! Containers: what runs inside a pod.

use std::collections::BTreeMap;

use kapi_codegen::ApiType;
use kapi_runtime::Quantity;
use serde::{Deserialize, Serialize};

use super::env::{EnvFromSource, EnvVar};
use super::probe::{Lifecycle, Probe};
use super::security::SecurityContext;
use crate::go_json::{null_as_default, omitempty};

/// One application container of a pod (a regular, init or sidecar container).
///
/// Probes, lifecycle and security context are boxed (pointers in Go): inline
/// they took 1.6 KB of every container, set or not.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    /// Name of the container, unique within the pod (a DNS label).
    #[serde(default)]
    #[api(required, format = "dns1123-label")]
    #[api(proto = 1)]
    pub name: String,
    /// Image reference to run, e.g. `nginx:1.27` or `registry.example/app@sha256:...`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(not_empty)]
    #[api(proto = 2)]
    pub image: Option<String>,
    /// Executable and arguments replacing the image's entrypoint; `$(VAR)` expands
    /// environment variables.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub command: Option<Vec<String>>,
    /// Arguments replacing the image's default command arguments.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub args: Option<Vec<String>>,
    /// Directory the process starts in; the image's default when unset.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub working_dir: Option<String>,
    /// Ports the container listens on (informational, plus host port mapping).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("containerPort", "protocol"),
        patch_strategy = "merge",
        patch_merge_key = "containerPort"
    )]
    #[api(proto = 6)]
    pub ports: Option<Vec<ContainerPort>>,
    /// Whole ConfigMaps or Secrets whose keys become environment variables.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 19)]
    pub env_from: Option<Vec<EnvFromSource>>,
    /// Environment variables, each a literal or taken from another source.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("name"),
        patch_strategy = "merge",
        patch_merge_key = "name"
    )]
    #[api(proto = 7)]
    pub env: Option<Vec<EnvVar>>,
    /// Compute resources the container asks for and may not exceed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 8)]
    pub resources: ResourceRequirements,
    /// How the container reacts when its resources are resized in place.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 23)]
    pub resize_policy: Option<Vec<ContainerResizePolicy>>,
    /// For init containers only: `Always` turns the container into a sidecar that
    /// keeps running next to the regular containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("Always"))]
    #[api(proto = 24)]
    pub restart_policy: Option<String>,
    /// Volumes of the pod mounted into the container's filesystem.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("mountPath"),
        patch_strategy = "merge",
        patch_merge_key = "mountPath"
    )]
    #[api(proto = 9)]
    pub volume_mounts: Option<Vec<VolumeMount>>,
    /// Raw block volumes of the pod exposed as devices.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("devicePath"),
        patch_strategy = "merge",
        patch_merge_key = "devicePath"
    )]
    #[api(proto = 21)]
    pub volume_devices: Option<Vec<VolumeDevice>>,
    /// Check that restarts the container when it fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10)]
    pub liveness_probe: Option<Box<Probe>>,
    /// Check that takes the container out of service endpoints while it fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 11)]
    pub readiness_probe: Option<Box<Probe>>,
    /// Check that must succeed once before the other probes start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 22)]
    pub startup_probe: Option<Box<Probe>>,
    /// Actions run right after start and right before stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 12)]
    pub lifecycle: Option<Box<Lifecycle>>,
    /// File inside the container whose content becomes the termination message.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "/dev/termination-log")]
    #[api(proto = 13)]
    pub termination_message_path: Option<String>,
    /// Where the termination message comes from: the file only (`File`) or the
    /// end of the log when the file is empty (`FallbackToLogsOnError`).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "File", one_of("File", "FallbackToLogsOnError"))]
    #[api(proto = 20)]
    pub termination_message_policy: Option<String>,
    /// When the image is pulled: `Always`, `IfNotPresent` or `Never`. Defaults to
    /// `Always` for `:latest` or untagged images, else `IfNotPresent`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(one_of("Always", "IfNotPresent", "Never"))]
    #[api(proto = 14)]
    pub image_pull_policy: Option<String>,
    /// Privileges and access control of this container, over the pod's settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 15)]
    pub security_context: Option<Box<SecurityContext>>,
    /// Keep a stdin buffer open for attaching clients.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 16)]
    pub stdin: Option<bool>,
    /// Close stdin after the first attached client disconnects.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 17)]
    pub stdin_once: Option<bool>,
    /// Allocate a terminal (needs `stdin`).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 18)]
    pub tty: Option<bool>,
}

/// A port a container exposes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    /// Name services can refer to (an IANA service name, at most 15 characters).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub name: Option<String>,
    /// Port on the node forwarded to the container port; rarely needed.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub host_port: Option<i32>,
    /// Port number the container listens on.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 3)]
    pub container_port: i32,
    /// `TCP`, `UDP` or `SCTP`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "TCP")]
    #[api(proto = 4)]
    pub protocol: Option<String>,
    /// Node address the host port binds to.
    #[serde(default, rename = "hostIP", skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub host_ip: Option<String>,
}

/// Compute resources of a container or pod: the amounts reserved for it
/// (requests) and the amounts it may not exceed (limits).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::round_resources)]
#[api(validate = super::validation::validate_resources)]
pub struct ResourceRequirements {
    /// Most of each resource that may be used, e.g. `cpu: 500m`, `memory: 1Gi`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub limits: Option<BTreeMap<String, Quantity>>,
    /// Amount of each resource reserved for scheduling; defaults to the limit.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub requests: Option<BTreeMap<String, Quantity>>,
    /// Dynamically allocated resource claims of the pod that this container uses.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("name"))]
    #[api(proto = 3)]
    pub claims: Option<Vec<ResourceClaim>>,
}

/// Use of one of the pod's resource claims by a container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ResourceClaim {
    /// Name of an entry in the pod's `resourceClaims`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// One request of the claim, when only that one is wanted.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub request: Option<String>,
}

/// What happens to a container when one of its resources is resized.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ContainerResizePolicy {
    /// The resource, `cpu` or `memory`.
    #[serde(default)]
    #[api(required, one_of("cpu", "memory"))]
    #[api(proto = 1)]
    pub resource_name: String,
    /// `NotRequired` (resize in place) or `RestartContainer`.
    #[serde(default)]
    #[api(required, one_of("NotRequired", "RestartContainer"))]
    #[api(proto = 2)]
    pub restart_policy: String,
}

/// A volume of the pod mounted at a path of the container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct VolumeMount {
    /// Name of a volume of the pod.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Mount read-only.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub read_only: Option<bool>,
    /// Whether a read-only mount is read-only recursively: `Disabled`,
    /// `IfPossible` or `Enabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("Disabled", "IfPossible", "Enabled"))]
    #[api(proto = 7)]
    pub recursive_read_only: Option<String>,
    /// Path inside the container; may not contain `:`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub mount_path: String,
    /// Sub-path of the volume to mount instead of its root.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub sub_path: Option<String>,
    /// How mounts propagate between host and container: `None`,
    /// `HostToContainer` or `Bidirectional`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("None", "HostToContainer", "Bidirectional"))]
    #[api(proto = 5)]
    pub mount_propagation: Option<String>,
    /// Like `subPath`, with `$(VAR)` expanded from the container's environment.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub sub_path_expr: Option<String>,
}

/// A raw block volume of the pod exposed as a device node in the container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct VolumeDevice {
    /// Name of a persistent volume claim volume of the pod.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Path of the device inside the container.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub device_path: String,
}
