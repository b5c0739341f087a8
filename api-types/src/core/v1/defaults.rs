//! The defaults of core/v1 kinds other than pods (those are in `pod/defaults.rs`)
//! that depend on other fields or on status (k8s.io/kubernetes/pkg/apis/core/v1/
//! defaults.go); plain values are `#[api(default = ...)]` on the fields.

use super::limitrange::LimitRangeItem;
use super::node::Node;
use super::node::status::NodeStatus;
use super::persistent_volume::PersistentVolume;
use super::persistent_volume_claim::PersistentVolumeClaim;
use super::persistent_volume_claim::PersistentVolumeClaimStatus;
use super::replicationcontroller::ReplicationController;
use super::resourcequota::{ResourceQuotaSpec, ResourceQuotaStatus};
use crate::defaulting::{default_text, is_unset, round_resource_list};

/// `SetDefaults_ReplicationController`: the template's labels stand in for an
/// empty selector and for the controller's own empty labels.
pub(super) fn default_replication_controller(rc: &mut ReplicationController) {
    let Some(labels) = rc
        .spec
        .template
        .as_ref()
        .and_then(|t| t.metadata.labels.clone())
    else {
        return;
    };
    if rc.spec.selector.as_ref().is_none_or(|s| s.is_empty()) {
        rc.spec.selector = Some(labels.clone());
    }
    if rc.metadata.labels.as_ref().is_none_or(|l| l.is_empty()) {
        rc.metadata.labels = Some(labels);
    }
}

/// `SetDefaults_PersistentVolume`: a new volume is `Pending`, retained when its
/// claim goes, and a filesystem.
pub(super) fn default_persistent_volume(pv: &mut PersistentVolume) {
    default_text(&mut pv.status.phase, "Pending");
    default_text(&mut pv.spec.persistent_volume_reclaim_policy, "Retain");
    pv.spec
        .volume_mode
        .get_or_insert_with(|| "Filesystem".to_owned());
    round_resource_list(&mut pv.spec.capacity);
}

/// `SetDefaults_PersistentVolumeClaim`: a new claim is `Pending`.
pub(super) fn default_persistent_volume_claim(pvc: &mut PersistentVolumeClaim) {
    default_text(&mut pvc.status.phase, "Pending");
}

/// `SetDefaults_LimitRangeItem`: for containers, the default limit falls back to
/// the maximum, and the default request to the default limit, then the minimum.
pub(super) fn default_limit_range_item(item: &mut LimitRangeItem) {
    if item.type_ != "Container" {
        return;
    }
    let default = item.default.get_or_insert_with(Default::default);
    for (name, max) in item.max.iter().flatten() {
        default.entry(name.clone()).or_insert_with(|| max.clone());
    }
    let request = item.default_request.get_or_insert_with(Default::default);
    for (name, limit) in default.iter().chain(item.min.iter().flatten()) {
        request.entry(name.clone()).or_insert_with(|| limit.clone());
    }
    for list in [
        &mut item.max,
        &mut item.min,
        &mut item.default,
        &mut item.default_request,
        &mut item.max_limit_request_ratio,
    ] {
        round_resource_list(list);
    }
}

/// The resource lists of a node's status (`SetDefaults_ResourceList`).
pub(super) fn round_node_status(status: &mut NodeStatus) {
    round_resource_list(&mut status.capacity);
    round_resource_list(&mut status.allocatable);
}

/// The resource lists of a quota (`SetDefaults_ResourceList`).
pub(super) fn round_quota_spec(spec: &mut ResourceQuotaSpec) {
    round_resource_list(&mut spec.hard);
}

/// The resource lists of a quota's status (`SetDefaults_ResourceList`).
pub(super) fn round_quota_status(status: &mut ResourceQuotaStatus) {
    round_resource_list(&mut status.hard);
    round_resource_list(&mut status.used);
}

/// The resource lists of a claim's status (`SetDefaults_ResourceList`).
pub(super) fn round_claim_status(status: &mut PersistentVolumeClaimStatus) {
    round_resource_list(&mut status.capacity);
    round_resource_list(&mut status.allocated_resources);
}

/// The node's pod ranges: `podCIDR` is the first of `podCIDRs`, and Kubernetes
/// fills the list from the single field when only that was given (the
/// conversion through its internal version, which has only the list). And
/// `SetDefaults_NodeStatus`: without a separate allocatable amount, all capacity
/// is allocatable.
pub(super) fn default_node(node: &mut Node) {
    let status = &mut node.status;
    if status.allocatable.is_none() && status.capacity.is_some() {
        status.allocatable = status.capacity.clone();
    }
    let spec = &mut node.spec;
    let list_empty = spec.pod_cidrs.as_ref().is_none_or(|l| l.is_empty());
    if list_empty {
        if !is_unset(&spec.pod_cidr) {
            spec.pod_cidrs = spec.pod_cidr.clone().map(|cidr| vec![cidr]);
        }
    } else {
        spec.pod_cidr = spec.pod_cidrs.as_ref().and_then(|l| l.first().cloned());
    }
}
