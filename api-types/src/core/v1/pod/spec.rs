//! The desired state of a pod, shared by pods and pod templates.

use std::collections::BTreeMap;

use kapi_codegen::ApiType;
use kapi_runtime::Quantity;
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::affinity::{Affinity, Toleration, TopologySpreadConstraint};
use super::container::{Container, ResourceRequirements};
use super::ephemeral_container::EphemeralContainer;
use super::security::PodSecurityContext;
use super::volume::Volume;
use crate::core::v1::reference::LocalObjectReference;
use crate::go_json::{null_as_default, omitempty};

/// What a pod should run and how: its containers, volumes, scheduling
/// constraints and runtime settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::default_pod_spec)]
#[api(validate = super::validation::validate_pod_spec)]
pub struct PodSpec {
    /// Volumes the containers can mount.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("name"),
        patch_strategy = "merge,retainKeys",
        patch_merge_key = "name"
    )]
    #[api(proto = 1)]
    pub volumes: Option<Vec<Volume>>,
    /// Containers run one after the other, each to completion, before the regular
    /// containers start (or, with `restartPolicy: Always`, sidecars kept running).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("name"),
        patch_strategy = "merge",
        patch_merge_key = "name"
    )]
    #[api(proto = 20)]
    pub init_containers: Option<Vec<Container>>,
    /// The application containers; at least one.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(
        list_type = "map",
        list_map_keys("name"),
        patch_strategy = "merge",
        patch_merge_key = "name"
    )]
    #[api(proto = 2)]
    pub containers: Vec<Container>,
    /// Debugging containers added to the running pod.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("name"),
        patch_strategy = "merge",
        patch_merge_key = "name"
    )]
    #[api(proto = 34)]
    pub ephemeral_containers: Option<Vec<EphemeralContainer>>,
    /// When containers are restarted: `Always`, `OnFailure` or `Never`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "Always", one_of("Always", "OnFailure", "Never"))]
    #[api(proto = 3)]
    pub restart_policy: Option<String>,
    /// Seconds between the polite stop signal and the kill on deletion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = 30)]
    #[api(proto = 4)]
    pub termination_grace_period_seconds: Option<i64>,
    /// Seconds the pod may run, counted from its start, before it is failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub active_deadline_seconds: Option<i64>,
    /// DNS setup: `ClusterFirst`, `ClusterFirstWithHostNet`, `Default` (the
    /// node's) or `None` (only `dnsConfig`).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        default = "ClusterFirst",
        one_of("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
    )]
    #[api(proto = 6)]
    pub dns_policy: Option<String>,
    /// Labels a node must have for the pod to run on it.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(map_type = "atomic")]
    #[api(proto = 7)]
    pub node_selector: Option<BTreeMap<String, String>>,
    /// ServiceAccount the pod runs as.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 8)]
    pub service_account_name: Option<String>,
    /// Old name of `serviceAccountName`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 9)]
    pub service_account: Option<String>,
    /// Whether an API token is mounted automatically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 21)]
    pub automount_service_account_token: Option<bool>,
    /// Node the pod is bound to; set by the scheduler, or by hand to bypass it.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 10)]
    pub node_name: Option<String>,
    /// Use the node's network namespace.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 11)]
    pub host_network: Option<bool>,
    /// Use the node's process namespace.
    #[serde(default, rename = "hostPID", skip_serializing_if = "omitempty")]
    #[api(proto = 12)]
    pub host_pid: Option<bool>,
    /// Use the node's IPC namespace.
    #[serde(default, rename = "hostIPC", skip_serializing_if = "omitempty")]
    #[api(proto = 13)]
    pub host_ipc: Option<bool>,
    /// Let the containers of the pod see each other's processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 27)]
    pub share_process_namespace: Option<bool>,
    /// Security settings for all containers and volumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 14)]
    pub security_context: Option<Box<PodSecurityContext>>,
    /// Secrets with registry credentials for pulling the images.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("name"),
        patch_strategy = "merge",
        patch_merge_key = "name"
    )]
    #[api(proto = 15)]
    pub image_pull_secrets: Option<Vec<LocalObjectReference>>,
    /// Host name of the pod; the pod's name when unset.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(format = "dns1123-label")]
    #[api(proto = 16)]
    pub hostname: Option<String>,
    /// Subdomain: the pod gets the name `<hostname>.<subdomain>.<namespace>.svc`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(format = "dns1123-label")]
    #[api(proto = 17)]
    pub subdomain: Option<String>,
    /// Node and pod affinity rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 18)]
    pub affinity: Option<Box<Affinity>>,
    /// Scheduler that places the pod.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "default-scheduler")]
    #[api(proto = 19)]
    pub scheduler_name: Option<String>,
    /// Taints the pod tolerates.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 22)]
    pub tolerations: Option<Vec<Toleration>>,
    /// Extra `/etc/hosts` entries.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("ip"),
        patch_strategy = "merge",
        patch_merge_key = "ip"
    )]
    #[api(proto = 23)]
    pub host_aliases: Option<Vec<HostAlias>>,
    /// PriorityClass giving the pod its priority.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 24)]
    pub priority_class_name: Option<String>,
    /// Priority value, filled in from `priorityClassName` by admission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 25)]
    pub priority: Option<i32>,
    /// DNS settings merged with those `dnsPolicy` produces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 26)]
    pub dns_config: Option<Box<PodDNSConfig>>,
    /// Extra pod conditions that must be true for the pod to count as ready.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 28)]
    pub readiness_gates: Option<Vec<PodReadinessGate>>,
    /// RuntimeClass selecting the container runtime configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 29)]
    pub runtime_class_name: Option<String>,
    /// Whether Service addresses are injected as environment variables, the way
    /// Docker links did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 30)]
    pub enable_service_links: Option<bool>,
    /// `PreemptLowerPriority` or `Never`: whether the pod may evict lower-priority
    /// pods to get scheduled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("PreemptLowerPriority", "Never"))]
    #[api(proto = 31)]
    pub preemption_policy: Option<String>,
    /// Resources the pod's sandbox uses on top of its containers, set from its
    /// RuntimeClass.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 32)]
    pub overhead: Option<BTreeMap<String, Quantity>>,
    /// How matching pods are spread over zones, nodes and other domains.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("topologyKey", "whenUnsatisfiable"),
        patch_strategy = "merge",
        patch_merge_key = "topologyKey"
    )]
    #[api(proto = 33)]
    pub topology_spread_constraints: Option<Vec<TopologySpreadConstraint>>,
    /// Make the kernel host name the fully qualified domain name.
    #[serde(
        default,
        rename = "setHostnameAsFQDN",
        skip_serializing_if = "Option::is_none"
    )]
    #[api(proto = 35)]
    pub set_hostname_as_fqdn: Option<bool>,
    /// Operating system the pod needs; enables OS-specific validation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 36)]
    pub os: Option<PodOS>,
    /// Use the node's user namespace (`false` gives the pod its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 37)]
    pub host_users: Option<bool>,
    /// Gates that keep the pod from being scheduled while any is present.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("name"),
        patch_strategy = "merge",
        patch_merge_key = "name"
    )]
    #[api(proto = 38)]
    pub scheduling_gates: Option<Vec<PodSchedulingGate>>,
    /// Dynamically allocated resources (ResourceClaims) the pod uses.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("name"),
        patch_strategy = "merge,retainKeys",
        patch_merge_key = "name"
    )]
    #[api(proto = 39)]
    pub resource_claims: Option<Vec<PodResourceClaim>>,
    /// Resources of the pod as a whole, shared by its containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 40)]
    pub resources: Option<ResourceRequirements>,
}

/// Labels and spec of the pods a controller creates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_template)]
pub struct PodTemplateSpec {
    /// Labels and annotations of the pods.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// Spec of the pods.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: PodSpec,
}

/// An `/etc/hosts` entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct HostAlias {
    /// IP address of the entry.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub ip: String,
    /// Host names for the address.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub hostnames: Option<Vec<String>>,
}

/// DNS resolver settings of a pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodDNSConfig {
    /// Name server addresses.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub nameservers: Option<Vec<String>>,
    /// Search domains.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub searches: Option<Vec<String>>,
    /// Resolver options, e.g. `ndots`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub options: Option<Vec<PodDNSConfigOption>>,
}

/// One resolver option.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodDNSConfigOption {
    /// Option name.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub name: Option<String>,
    /// Option value, if it takes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub value: Option<String>,
}

/// A pod condition that must be true for the pod to be ready.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodReadinessGate {
    /// Type of the condition, as found in `status.conditions`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub condition_type: String,
}

/// The operating system of a pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodOS {
    /// `linux` or `windows`.
    #[serde(default)]
    #[api(required, one_of("linux", "windows"))]
    #[api(proto = 1)]
    pub name: String,
}

/// A gate holding back scheduling until some controller removes it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodSchedulingGate {
    /// Name of the gate.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
}

/// A ResourceClaim the pod uses, by name or made from a template.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodResourceClaim {
    /// Name the containers use to refer to the claim (a DNS label).
    #[serde(default)]
    #[api(required, format = "dns1123-label")]
    #[api(proto = 1)]
    pub name: String,
    /// An existing ResourceClaim in the pod's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub resource_claim_name: Option<String>,
    /// A ResourceClaimTemplate from which a claim is made for this pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub resource_claim_template_name: Option<String>,
}
