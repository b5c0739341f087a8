//! The defaults of apps/v1 that depend on other fields or build whole structs
//! (k8s.io/kubernetes/pkg/apis/apps/v1/defaults.go); plain values are
//! `#[api(default = ...)]` on the fields.

use kapi_runtime::IntOrString;

use super::daemonset::DaemonSet;
use super::deployment::Deployment;
use super::statefulset::StatefulSet;
use crate::defaulting::{default_text, is_unset};

/// `SetDefaults_Deployment`: a rolling update by default, whose limits are a
/// quarter of the replicas each way.
pub(super) fn default_deployment(deploy: &mut Deployment) {
    let strategy = &mut deploy.spec.strategy;
    if default_text(&mut strategy.type_, "RollingUpdate") == "RollingUpdate" {
        let rolling = strategy.rolling_update.get_or_insert_with(Default::default);
        let quarter = || IntOrString::String("25%".to_owned());
        rolling.max_unavailable.get_or_insert_with(quarter);
        rolling.max_surge.get_or_insert_with(quarter);
    }
}

/// `SetDefaults_DaemonSet`: a rolling update by default, one node at a time
/// and no surge.
///
/// The `deprecated.daemonset.template.generation` annotation is there too,
/// as upstream's conversion of its internal DaemonSet always writes it (its
/// template generation, 0 until the registry counts it): an object a client
/// sends reads with it before the field manager records what the client
/// set, so the writer owns it, as upstream records.
pub(super) fn default_daemon_set(ds: &mut DaemonSet) {
    let annotations = ds.metadata.annotations.get_or_insert_with(Default::default);
    let generation = annotations
        .get(super::daemonset::TEMPLATE_GENERATION_ANNOTATION)
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(0);
    annotations.insert(
        super::daemonset::TEMPLATE_GENERATION_ANNOTATION.to_owned(),
        generation.to_string(),
    );
    let strategy = &mut ds.spec.update_strategy;
    if default_text(&mut strategy.type_, "RollingUpdate") == "RollingUpdate" {
        let rolling = strategy.rolling_update.get_or_insert_with(Default::default);
        rolling.max_unavailable.get_or_insert(IntOrString::Int(1));
        rolling.max_surge.get_or_insert(IntOrString::Int(0));
    }
}

/// `SetDefaults_StatefulSet`: ordered pod management, a rolling update from
/// partition 0, and claims retained when the set is deleted or scaled down.
pub(super) fn default_stateful_set(sts: &mut StatefulSet) {
    let spec = &mut sts.spec;
    default_text(&mut spec.pod_management_policy, "OrderedReady");
    let strategy = &mut spec.update_strategy;
    if is_unset(&strategy.type_) {
        strategy.type_ = Some("RollingUpdate".to_owned());
        strategy.rolling_update.get_or_insert_with(Default::default);
    }
    if strategy.type_.as_deref() == Some("RollingUpdate")
        && let Some(rolling) = strategy.rolling_update.as_mut()
    {
        rolling.partition.get_or_insert(0);
    }
    let retention = spec
        .persistent_volume_claim_retention_policy
        .get_or_insert_with(Default::default);
    default_text(&mut retention.when_deleted, "Retain");
    default_text(&mut retention.when_scaled, "Retain");
}
