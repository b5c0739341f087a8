//! Ephemeral containers: debugging containers added to a running pod.

use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

use super::container::{
    ContainerPort, ContainerResizePolicy, ResourceRequirements, VolumeDevice, VolumeMount,
};
use super::env::{EnvFromSource, EnvVar};
use super::probe::{Lifecycle, Probe};
use super::security::SecurityContext;
use crate::go_json::{null_as_default, omitempty};

/// A temporary container added to a running pod through the
/// `ephemeralcontainers` subresource (`kubectl debug`). It is never restarted and
/// may not declare ports, probes, lifecycle actions or resources; those fields
/// exist only because it shares the shape of [`super::container::Container`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(
    field = "ephemeralContainerCommon",
    number = 1,
    message = "EphemeralContainerCommon"
))]
pub struct EphemeralContainer {
    /// Name of the container, unique among all containers of the pod.
    #[serde(default)]
    #[api(required, format = "dns1123-label")]
    #[api(proto = 1, proto_in = "ephemeralContainerCommon")]
    pub name: String,
    /// Image reference to run.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(not_empty)]
    #[api(proto = 2, proto_in = "ephemeralContainerCommon")]
    pub image: Option<String>,
    /// Executable and arguments replacing the image's entrypoint.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3, proto_in = "ephemeralContainerCommon")]
    pub command: Option<Vec<String>>,
    /// Arguments replacing the image's default command arguments.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4, proto_in = "ephemeralContainerCommon")]
    pub args: Option<Vec<String>>,
    /// Directory the process starts in.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5, proto_in = "ephemeralContainerCommon")]
    pub working_dir: Option<String>,
    /// Not allowed for ephemeral containers.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("containerPort", "protocol"),
        patch_strategy = "merge",
        patch_merge_key = "containerPort"
    )]
    #[api(proto = 6, proto_in = "ephemeralContainerCommon")]
    pub ports: Option<Vec<ContainerPort>>,
    /// Whole ConfigMaps or Secrets whose keys become environment variables.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 19, proto_in = "ephemeralContainerCommon")]
    pub env_from: Option<Vec<EnvFromSource>>,
    /// Environment variables.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("name"),
        patch_strategy = "merge",
        patch_merge_key = "name"
    )]
    #[api(proto = 7, proto_in = "ephemeralContainerCommon")]
    pub env: Option<Vec<EnvVar>>,
    /// Not allowed for ephemeral containers: they use what the pod has.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 8, proto_in = "ephemeralContainerCommon")]
    pub resources: ResourceRequirements,
    /// Not allowed for ephemeral containers.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 23, proto_in = "ephemeralContainerCommon")]
    pub resize_policy: Option<Vec<ContainerResizePolicy>>,
    /// Not allowed for ephemeral containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 24, proto_in = "ephemeralContainerCommon")]
    pub restart_policy: Option<String>,
    /// Volumes of the pod mounted into the container (no sub-paths).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("mountPath"),
        patch_strategy = "merge",
        patch_merge_key = "mountPath"
    )]
    #[api(proto = 9, proto_in = "ephemeralContainerCommon")]
    pub volume_mounts: Option<Vec<VolumeMount>>,
    /// Raw block volumes of the pod exposed as devices.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("devicePath"),
        patch_strategy = "merge",
        patch_merge_key = "devicePath"
    )]
    #[api(proto = 21, proto_in = "ephemeralContainerCommon")]
    pub volume_devices: Option<Vec<VolumeDevice>>,
    /// Not allowed for ephemeral containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10, proto_in = "ephemeralContainerCommon")]
    pub liveness_probe: Option<Box<Probe>>,
    /// Not allowed for ephemeral containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 11, proto_in = "ephemeralContainerCommon")]
    pub readiness_probe: Option<Box<Probe>>,
    /// Not allowed for ephemeral containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 22, proto_in = "ephemeralContainerCommon")]
    pub startup_probe: Option<Box<Probe>>,
    /// Not allowed for ephemeral containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 12, proto_in = "ephemeralContainerCommon")]
    pub lifecycle: Option<Box<Lifecycle>>,
    /// File inside the container whose content becomes the termination message.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "/dev/termination-log")]
    #[api(proto = 13, proto_in = "ephemeralContainerCommon")]
    pub termination_message_path: Option<String>,
    /// `File` or `FallbackToLogsOnError`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "File", one_of("File", "FallbackToLogsOnError"))]
    #[api(proto = 20, proto_in = "ephemeralContainerCommon")]
    pub termination_message_policy: Option<String>,
    /// `Always`, `IfNotPresent` or `Never`; defaulted from the image's tag.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(one_of("Always", "IfNotPresent", "Never"))]
    #[api(proto = 14, proto_in = "ephemeralContainerCommon")]
    pub image_pull_policy: Option<String>,
    /// Privileges and access control of this container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 15, proto_in = "ephemeralContainerCommon")]
    pub security_context: Option<Box<SecurityContext>>,
    /// Keep a stdin buffer open for attaching clients.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 16, proto_in = "ephemeralContainerCommon")]
    pub stdin: Option<bool>,
    /// Close stdin after the first attached client disconnects.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 17, proto_in = "ephemeralContainerCommon")]
    pub stdin_once: Option<bool>,
    /// Allocate a terminal.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 18, proto_in = "ephemeralContainerCommon")]
    pub tty: Option<bool>,
    /// Name of a container of the pod whose namespaces (process, IPC, ...) this
    /// one joins; the pod's own namespaces when unset.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub target_container_name: Option<String>,
}
