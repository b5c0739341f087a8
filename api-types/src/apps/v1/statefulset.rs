//! StatefulSets: pods with stable names, network identities and storage, created,
//! updated and removed in order.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::IntOrString;
use kapi_runtime::meta::{LabelSelector, ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::v1::persistent_volume_claim::PersistentVolumeClaim;
use crate::core::v1::pod::PodTemplateSpec;
use crate::go_json::{null_as_default, omitempty};

/// Runs replicas of a pod template as `<name>-<ordinal>` pods, each with its own
/// claims made from templates, and rolls changes out one ordinal at a time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "apps",
    version = "v1",
    plural = "statefulsets",
    storage_prefix = "statefulsets",
    short_names("sts"),
    categories("all"),
    status,
    scale(
        spec_replicas = ".spec.replicas",
        status_replicas = ".status.replicas",
        label_selector = ".spec.selector"
    ),
    printer_column(name = "Ready", type = "string", json_path = ".status.readyReplicas",
        description = "Ready pods out of the desired number."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the stateful set was created."),
    printer_column(name = "Containers", type = "string",
        json_path = ".spec.template.spec.containers[*].name", priority = 1,
        description = "Names of the template's containers."),
    printer_column(name = "Images", type = "string",
        json_path = ".spec.template.spec.containers[*].image", priority = 1,
        description = "Images of the template's containers."),
    validate_update = super::validation::validate_statefulset_update,
    warnings = statefulset_warnings,
    table_cells = statefulset_cells
)]
#[api(defaults = super::defaults::default_stateful_set)]
pub struct StatefulSet {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The desired pods, their claims and how updates proceed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: StatefulSetSpec,
    /// Progress of the set, as last observed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: StatefulSetStatus,
}

/// The desired state of a stateful set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_statefulset_spec)]
pub struct StatefulSetSpec {
    /// Number of pods wanted; 1 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = 1)]
    #[api(proto = 1)]
    pub replicas: Option<i32>,
    /// Labels of the pods this set owns; must match the template's labels.
    #[serde(default)]
    #[api(proto = 2)]
    #[api(required)]
    pub selector: Option<LabelSelector>,
    /// The pods to create; each gets the name `<set>-<ordinal>`.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    #[api(required)]
    pub template: PodTemplateSpec,
    /// Claims made for every pod, named `<template>-<pod>`, and mounted by the
    /// volume of the same name in the pod template.
    #[serde(
        default,
        skip_serializing_if = "omitempty",
        serialize_with = "super::claim_templates::serialize",
        deserialize_with = "super::claim_templates::deserialize"
    )]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub volume_claim_templates: Option<Vec<PersistentVolumeClaim>>,
    /// Headless Service that gives the pods their DNS names
    /// (`<pod>.<service>.<namespace>.svc`).
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 5)]
    pub service_name: String,
    /// `OrderedReady` (one pod at a time, in order; the default) or `Parallel`
    /// for scaling.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub pod_management_policy: Option<String>,
    /// How pods are replaced when the template changes.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 7)]
    pub update_strategy: StatefulSetUpdateStrategy,
    /// ControllerRevisions kept for rollback; 10 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = 10)]
    #[api(proto = 8)]
    pub revision_history_limit: Option<i32>,
    /// Seconds a new pod must be ready, without crashing, to count as available.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 9)]
    pub min_ready_seconds: Option<i32>,
    /// What happens to the claims made from the templates when the set is
    /// deleted or scaled down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10)]
    pub persistent_volume_claim_retention_policy:
        Option<StatefulSetPersistentVolumeClaimRetentionPolicy>,
    /// Numbering of the pods; ordinals start at 0 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 11)]
    pub ordinals: Option<StatefulSetOrdinals>,
}

/// How a stateful set replaces its pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetUpdateStrategy {
    /// `RollingUpdate` (the default: replace pods from the highest ordinal
    /// down) or `OnDelete` (only when a pod is deleted by someone else).
    #[serde(default, rename = "type", skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub type_: Option<String>,
    /// Limits of a rolling update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub rolling_update: Option<RollingUpdateStatefulSetStrategy>,
}

/// The limits of a stateful set's rolling update.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateStatefulSetStrategy {
    /// Only pods with an ordinal at or above this one are updated (a staged
    /// rollout); 0 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub partition: Option<i32>,
    /// Pods that may be unavailable during the update: a number or a percentage
    /// of the desired pods; needs the MaxUnavailableStatefulSet feature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub max_unavailable: Option<IntOrString>,
}

/// Whether claims made from a stateful set's templates outlive their pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetPersistentVolumeClaimRetentionPolicy {
    /// When the set is deleted: `Retain` (the default) or `Delete`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub when_deleted: Option<String>,
    /// When the set is scaled down, for the removed pods' claims: `Retain`
    /// (the default) or `Delete`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub when_scaled: Option<String>,
}

/// How the pods of a stateful set are numbered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetOrdinals {
    /// Ordinal of the first pod; pods are numbered `start` to
    /// `start + replicas - 1`.
    #[serde(default)]
    #[api(proto = 1)]
    pub start: i32,
}

/// The observed state of a stateful set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetStatus {
    /// The `metadata.generation` the controller last acted on.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub observed_generation: Option<i64>,
    /// Pods the controller has created.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub replicas: i32,
    /// Pods that are ready.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub ready_replicas: Option<i32>,
    /// Pods created from the revision `currentRevision`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub current_replicas: Option<i32>,
    /// Pods created from the revision `updateRevision`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub updated_replicas: Option<i32>,
    /// ControllerRevision of the pods below the update partition.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub current_revision: Option<String>,
    /// ControllerRevision the pods are being moved to.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 7)]
    pub update_revision: Option<String>,
    /// Counter the controller uses to make ControllerRevision names unique after
    /// a hash collision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    pub collision_count: Option<i32>,
    /// Conditions of the set.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("type"))]
    #[api(patch_strategy = "merge", patch_merge_key = "type")]
    #[api(proto = 10)]
    pub conditions: Option<Vec<StatefulSetCondition>>,
    /// Pods that have been ready for at least `minReadySeconds`.
    #[serde(default)]
    #[api(proto = 11)]
    pub available_replicas: i32,
}

/// One condition of a stateful set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetCondition {
    /// Type of the condition.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub status: String,
    /// When the status last changed.
    #[serde(default)]
    #[api(proto = 3, proto_value)]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub reason: Option<String>,
    /// Human-readable detail of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub message: Option<String>,
}

/// The `kubectl get statefulsets` row (kube-apiserver's `printStatefulSet`).
fn statefulset_cells(set: &StatefulSet) -> Vec<Value> {
    // Upstream prints the defaulted replicas, which is 1 when the spec leaves
    // it unset.
    let desired = set.spec.replicas.unwrap_or(1);
    let ready = set.status.ready_replicas.unwrap_or(0);
    let containers = &set.spec.template.spec.containers;
    let names: Vec<&str> = containers.iter().map(|c| c.name.as_str()).collect();
    let images: Vec<&str> = containers
        .iter()
        .map(|c| c.image.as_deref().unwrap_or_default())
        .collect();
    vec![
        json!(format!("{ready}/{desired}")),
        json!(set.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(names.join(",")),
        json!(images.join(",")),
    ]
}

/// The `Warning` headers of a write: the pod template's on create and when
/// the spec changes, the claim templates' on every write.
fn statefulset_warnings(d: &StatefulSet, old: Option<&StatefulSet>) -> Vec<String> {
    let mut warnings = crate::core::v1::pod::warnings::template_warnings(
        &["spec", "template"],
        Some(&d.spec.template),
        &d.spec,
        old.map(|o| &o.spec),
    );
    warnings.extend(super::warnings::claim_template_warnings(d, old.is_some()));
    warnings
}
