//! Security settings of pods and containers.

use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

use crate::go_json::omitempty;

/// Privileges and access control of one container; set fields override the
/// pod's [`PodSecurityContext`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_security)]
pub struct SecurityContext {
    /// Linux capabilities added to or dropped from the runtime's default set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub capabilities: Option<Capabilities>,
    /// Run as a privileged container, equivalent to root on the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub privileged: Option<bool>,
    /// SELinux context of the container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub se_linux_options: Option<SELinuxOptions>,
    /// Windows-specific settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10)]
    pub windows_options: Option<WindowsSecurityContextOptions>,
    /// UID the entrypoint runs as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub run_as_user: Option<i64>,
    /// Primary GID the entrypoint runs as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub run_as_group: Option<i64>,
    /// Refuse to start the container if it would run as UID 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub run_as_non_root: Option<bool>,
    /// Mount the container's root filesystem read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6)]
    pub read_only_root_filesystem: Option<bool>,
    /// Whether a process may gain more privileges than its parent (setuid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub allow_privilege_escalation: Option<bool>,
    /// Masking of `/proc`: `Default` or `Unmasked`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("Default", "Unmasked"))]
    #[api(proto = 9)]
    pub proc_mount: Option<String>,
    /// Seccomp filter of the container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 11)]
    pub seccomp_profile: Option<SeccompProfile>,
    /// AppArmor profile of the container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 12)]
    pub app_armor_profile: Option<AppArmorProfile>,
}

/// Linux capabilities, e.g. `NET_ADMIN`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// Capabilities granted on top of the default set.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub add: Option<Vec<String>>,
    /// Capabilities removed from the default set (`ALL` drops every one).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub drop: Option<Vec<String>>,
}

/// An SELinux context.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SELinuxOptions {
    /// SELinux user.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub user: Option<String>,
    /// SELinux role.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub role: Option<String>,
    /// SELinux type.
    #[serde(default, rename = "type", skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub type_: Option<String>,
    /// SELinux level (MCS label).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub level: Option<String>,
}

/// A seccomp profile.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SeccompProfile {
    /// `RuntimeDefault`, `Unconfined` or `Localhost`.
    #[serde(default, rename = "type")]
    #[api(required, one_of("RuntimeDefault", "Unconfined", "Localhost"))]
    #[api(proto = 1)]
    pub type_: String,
    /// For `Localhost`: path of the profile below the kubelet's seccomp directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub localhost_profile: Option<String>,
}

/// An AppArmor profile.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct AppArmorProfile {
    /// `RuntimeDefault`, `Unconfined` or `Localhost`.
    #[serde(default, rename = "type")]
    #[api(required, one_of("RuntimeDefault", "Unconfined", "Localhost"))]
    #[api(proto = 1)]
    pub type_: String,
    /// For `Localhost`: name of a profile loaded on the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub localhost_profile: Option<String>,
}

/// Settings that apply to Windows containers only.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct WindowsSecurityContextOptions {
    /// Name of the GMSA credential spec resource to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub gmsa_credential_spec_name: Option<String>,
    /// Content of the GMSA credential spec, filled in by the GMSA webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub gmsa_credential_spec: Option<String>,
    /// Windows user name the entrypoint runs as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub run_as_user_name: Option<String>,
    /// Run as a host process container with access to the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub host_process: Option<bool>,
}

/// Security settings that apply to every container of a pod, and to its volumes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_pod_security)]
pub struct PodSecurityContext {
    /// SELinux context of all containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub se_linux_options: Option<SELinuxOptions>,
    /// Windows-specific settings of all containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub windows_options: Option<WindowsSecurityContextOptions>,
    /// UID the containers run as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub run_as_user: Option<i64>,
    /// Primary GID the containers run as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6)]
    pub run_as_group: Option<i64>,
    /// Refuse to start containers that would run as UID 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub run_as_non_root: Option<bool>,
    /// Extra GIDs given to the first process of every container.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub supplemental_groups: Option<Vec<i64>>,
    /// `Merge` the image's groups with `supplementalGroups`, or use only those
    /// (`Strict`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("Merge", "Strict"))]
    #[api(proto = 12)]
    pub supplemental_groups_policy: Option<String>,
    /// GID that owns supporting volumes and is added to every container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub fs_group: Option<i64>,
    /// Namespaced kernel parameters set for the pod.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 7)]
    pub sysctls: Option<Vec<Sysctl>>,
    /// When volume ownership is changed to `fsGroup`: `OnRootMismatch` or `Always`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("OnRootMismatch", "Always"))]
    #[api(proto = 9)]
    pub fs_group_change_policy: Option<String>,
    /// Seccomp filter of all containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10)]
    pub seccomp_profile: Option<SeccompProfile>,
    /// AppArmor profile of all containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 11)]
    pub app_armor_profile: Option<AppArmorProfile>,
    /// How volumes get their SELinux label: `MountOption` or `Recursive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("MountOption", "Recursive"))]
    #[api(proto = 13)]
    pub se_linux_change_policy: Option<String>,
}

/// One kernel parameter.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Sysctl {
    /// Parameter name, e.g. `net.core.somaxconn`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Value to set.
    #[serde(default)]
    #[api(proto = 2)]
    #[api(schema_required)]
    pub value: String,
}
