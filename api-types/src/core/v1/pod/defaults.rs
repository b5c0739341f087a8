//! Defaults that depend on other fields, which `#[api(default = ...)]` cannot
//! express (k8s.io/kubernetes/pkg/apis/core/v1/defaults.go): the pull policy from
//! the image tag, requests from limits, and the values Go's zero values produce.

use std::collections::BTreeMap;

use kapi_runtime::Quantity;

use super::Pod;
use super::claim::VolumeResourceRequirements;
use super::container::{Container, ResourceRequirements};
use super::env::{EnvVar, ResourceFieldSelector};
use super::qos;
use super::spec::PodSpec;
use super::status::ContainerStatus;
use super::volume::Volume;
use crate::defaulting::round_resource_list;

/// The `prepare` hook of Pod: the status a new pod starts with (pod strategy
/// `PrepareForCreate`: phase `Pending` and the QoS class). The QoS class reads
/// the requests, so the pod's defaults are applied first (again afterwards with
/// the others, which changes nothing).
pub(super) fn prepare_pod(pod: &mut Pod) {
    default_pod(pod);
    if pod.status.phase.as_deref().unwrap_or_default().is_empty() {
        pod.status.phase = Some("Pending".to_owned());
    }
    if pod
        .status
        .qos_class
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        pod.status.qos_class = Some(qos::class(&pod.spec).to_owned());
    }
}

/// The `defaults` hook of Pod (`SetDefaults_Pod`): what pods get and pod
/// templates do not. Requests default to limits, service links are on, and
/// with host networking every container port is also a host port.
pub(super) fn default_pod(pod: &mut Pod) {
    let spec = &mut pod.spec;
    for container in spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
    {
        default_requests_to_limits(&mut container.resources);
        if spec.host_network == Some(true) {
            default_host_ports(container);
        }
    }
    spec.enable_service_links.get_or_insert(true);
}

/// The `defaults` hook of PodSpec (`SetDefaults_PodSpec` and the container,
/// volume and env defaults that depend on other fields), shared by pods and the
/// pod templates of controllers. Plain field defaults come from
/// `#[api(default = ...)]` afterwards.
pub(super) fn default_pod_spec(spec: &mut PodSpec) {
    spec.security_context.get_or_insert_with(Box::default);
    round_resource_list(&mut spec.overhead);
    default_service_account(spec);
    for volume in spec.volumes.iter_mut().flatten() {
        default_volume(volume);
    }
    for container in spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
    {
        default_image_pull_policy(container.image.as_deref(), &mut container.image_pull_policy);
        default_env_divisors(container.env.iter_mut().flatten());
    }
    for container in spec.ephemeral_containers.iter_mut().flatten() {
        default_image_pull_policy(container.image.as_deref(), &mut container.image_pull_policy);
        default_env_divisors(container.env.iter_mut().flatten());
    }
}

/// `serviceAccount` is the deprecated spelling of `serviceAccountName`: Kubernetes
/// reads the old one when the new one is empty and always writes both alike (its
/// conversion through the internal version, which has only the new one).
fn default_service_account(spec: &mut PodSpec) {
    let name = match spec.service_account_name.as_deref() {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => spec.service_account.clone().unwrap_or_default(),
    };
    if name.is_empty() {
        spec.service_account_name = None;
        spec.service_account = None;
    } else {
        spec.service_account_name = Some(name.clone());
        spec.service_account = Some(name);
    }
}

/// The resource lists of a container (`SetDefaults_ResourceList`).
pub(super) fn round_resources(resources: &mut ResourceRequirements) {
    round_resource_list(&mut resources.limits);
    round_resource_list(&mut resources.requests);
}

/// The resource lists of a claim (`SetDefaults_ResourceList`).
pub(super) fn round_volume_resources(resources: &mut VolumeResourceRequirements) {
    round_resource_list(&mut resources.limits);
    round_resource_list(&mut resources.requests);
}

/// The resources allocated to a running container (`SetDefaults_ResourceList`).
pub(super) fn round_allocated_resources(status: &mut ContainerStatus) {
    round_resource_list(&mut status.allocated_resources);
}

/// The pull policy Kubernetes picks for an image: `Always` for the `latest` tag
/// (which an image without tag or digest has), `IfNotPresent` otherwise.
pub fn image_pull_policy_for(image: &str) -> &'static str {
    if image.is_empty() {
        // Go fails to parse the name and falls back to no tag.
        return "IfNotPresent";
    }
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last_segment = name.rsplit('/').next().unwrap_or(name);
    match last_segment.rsplit_once(':').map(|(_, tag)| tag) {
        Some("latest") => "Always",
        Some(_) => "IfNotPresent",
        None if digest.is_some() => "IfNotPresent",
        None => "Always",
    }
}

fn default_image_pull_policy(image: Option<&str>, policy: &mut Option<String>) {
    if policy.as_deref().unwrap_or_default().is_empty() {
        *policy = Some(image_pull_policy_for(image.unwrap_or_default()).to_owned());
    }
}

/// A volume without any source is an `emptyDir`; Go's zero divisor prints as `0`.
fn default_volume(volume: &mut Volume) {
    if volume.has_no_source() {
        volume.empty_dir = Some(Box::default());
    }
    let downward_files = volume
        .downward_api
        .iter_mut()
        .flat_map(|d| d.items.iter_mut().flatten())
        .chain(
            volume
                .projected
                .iter_mut()
                .flat_map(|p| p.sources.iter_mut())
                .filter_map(|s| s.downward_api.as_mut())
                .flat_map(|d| d.items.iter_mut().flatten()),
        );
    for file in downward_files {
        default_divisor(file.resource_field_ref.as_mut());
    }
}

fn default_env_divisors<'a>(env: impl Iterator<Item = &'a mut EnvVar>) {
    for var in env {
        let selector = var
            .value_from
            .as_mut()
            .and_then(|v| v.resource_field_ref.as_mut());
        default_divisor(selector);
    }
}

/// `divisor` is a Go `resource.Quantity` value, which Kubernetes always writes
/// (as `"0"` when unset).
fn default_divisor(selector: Option<&mut ResourceFieldSelector>) {
    if let Some(selector) = selector {
        selector
            .divisor
            .get_or_insert_with(|| Quantity("0".to_owned()));
    }
}

/// A container with limits but no request for a resource requests its limit.
fn default_requests_to_limits(resources: &mut ResourceRequirements) {
    let Some(limits) = resources.limits.as_ref().filter(|l| !l.is_empty()) else {
        return;
    };
    let requests = resources.requests.get_or_insert_with(BTreeMap::new);
    for (name, limit) in limits {
        requests
            .entry(name.clone())
            .or_insert_with(|| limit.clone());
    }
}

/// With host networking every container port is also a host port.
fn default_host_ports(container: &mut Container) {
    for port in container.ports.iter_mut().flatten() {
        if port.host_port.unwrap_or(0) == 0 {
            port.host_port = Some(port.container_port);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy_follows_the_tag() {
        assert_eq!(image_pull_policy_for("nginx"), "Always");
        assert_eq!(image_pull_policy_for("nginx:latest"), "Always");
        assert_eq!(image_pull_policy_for("nginx:1.27"), "IfNotPresent");
        assert_eq!(image_pull_policy_for("localhost:5000/app"), "Always");
        assert_eq!(
            image_pull_policy_for("localhost:5000/app:v2"),
            "IfNotPresent"
        );
        assert_eq!(image_pull_policy_for("app@sha256:abcd"), "IfNotPresent");
        assert_eq!(image_pull_policy_for("app:latest@sha256:abcd"), "Always");
    }
}
