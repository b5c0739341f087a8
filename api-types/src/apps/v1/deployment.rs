//! Deployments: declarative, rolling updates of a set of identical pods.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::IntOrString;
use kapi_runtime::meta::{LabelSelector, ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::v1::pod::PodTemplateSpec;
use crate::go_json::{null_as_default, omitempty};
use crate::labels::format_selector;

/// Keeps a number of replicas of a pod template running and rolls out changes
/// to the template through ReplicaSets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "apps",
    version = "v1",
    plural = "deployments",
    storage_prefix = "deployments",
    reset_status = "spec, metadata.labels",
    short_names("deploy"),
    categories("all"),
    status,
    scale(
        spec_replicas = ".spec.replicas",
        status_replicas = ".status.replicas",
        label_selector = ".spec.selector"
    ),
    printer_column(name = "Ready", type = "string", json_path = ".status.readyReplicas",
        description = "Ready pods out of the desired number."),
    printer_column(name = "Up-to-date", type = "integer", json_path = ".status.updatedReplicas",
        description = "Pods that run the current template."),
    printer_column(name = "Available", type = "integer", json_path = ".status.availableReplicas",
        description = "Pods that have been ready for at least minReadySeconds."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the deployment was created."),
    printer_column(name = "Containers", type = "string",
        json_path = ".spec.template.spec.containers[*].name", priority = 1,
        description = "Names of the template's containers."),
    printer_column(name = "Images", type = "string",
        json_path = ".spec.template.spec.containers[*].image", priority = 1,
        description = "Images of the template's containers."),
    printer_column(name = "Selector", type = "string", json_path = ".spec.selector", priority = 1,
        description = "Label selector of the deployment's pods."),
    validate_update = super::validation::validate_deployment_update,
    warnings = deployment_warnings,
    table_cells = deployment_cells
)]
#[api(defaults = super::defaults::default_deployment)]
pub struct Deployment {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The desired pods and how to move to them.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: DeploymentSpec,
    /// Progress of the rollout, as last observed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: DeploymentStatus,
}

/// The desired state of a deployment. Besides the field rules, the selector must
/// be non-empty and match the template's labels (`validate_deployment_spec`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_deployment_spec)]
pub struct DeploymentSpec {
    /// Number of pods wanted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = 1, minimum = 0)]
    #[api(proto = 1)]
    pub replicas: Option<i32>,
    /// Labels of the pods this deployment owns; must match the template's
    /// labels and cannot change after creation.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub selector: Option<LabelSelector>,
    /// The pods to create.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 3)]
    pub template: PodTemplateSpec,
    /// How old pods are replaced by new ones.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(patch_strategy = "retainKeys")]
    #[api(proto = 4)]
    pub strategy: DeploymentStrategy,
    /// Seconds a new pod must be ready, without crashing, to count as available.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(minimum = 0)]
    #[api(proto = 5)]
    pub min_ready_seconds: Option<i32>,
    /// Old ReplicaSets kept for rollback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = 10, minimum = 0)]
    #[api(proto = 6)]
    pub revision_history_limit: Option<i32>,
    /// Stop rolling out template changes until unpaused.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 7)]
    pub paused: Option<bool>,
    /// Seconds without progress after which the rollout is reported as failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = 600)]
    #[api(proto = 9)]
    pub progress_deadline_seconds: Option<i32>,
}

/// How a deployment replaces its pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentStrategy {
    /// `RollingUpdate` (gradually) or `Recreate` (all old pods first).
    #[serde(default, rename = "type", skip_serializing_if = "omitempty")]
    #[api(default = "RollingUpdate")]
    #[api(proto = 1)]
    pub type_: Option<String>,
    /// Limits of a rolling update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub rolling_update: Option<RollingUpdateDeployment>,
}

/// The pace of a rolling update.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDeployment {
    /// Pods that may be unavailable during the update: a number or a percentage of
    /// the desired pods (rounded down).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub max_unavailable: Option<IntOrString>,
    /// Pods that may exist above the desired number: a number or a percentage
    /// (rounded up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub max_surge: Option<IntOrString>,
}

/// The observed state of a deployment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentStatus {
    /// The `metadata.generation` the controller last acted on.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub observed_generation: Option<i64>,
    /// Pods that exist (not terminating) and match the selector.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub replicas: Option<i32>,
    /// Pods that run the current template.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub updated_replicas: Option<i32>,
    /// Pods that are ready.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 7)]
    pub ready_replicas: Option<i32>,
    /// Pods that have been ready for at least `minReadySeconds`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub available_replicas: Option<i32>,
    /// Pods still missing to reach the desired number of available pods.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub unavailable_replicas: Option<i32>,
    /// Conditions such as `Available` and `Progressing`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "map",
        list_map_keys("type"),
        patch_strategy = "merge",
        patch_merge_key = "type"
    )]
    #[api(proto = 6)]
    pub conditions: Option<Vec<DeploymentCondition>>,
    /// Counter the controller uses to make ReplicaSet names unique after a hash
    /// collision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub collision_count: Option<i32>,
}

/// One condition of a deployment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentCondition {
    /// `Available`, `Progressing` or `ReplicaFailure`.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[api(required, one_of("True", "False", "Unknown"))]
    #[api(proto = 2)]
    pub status: String,
    /// When the condition was last updated.
    #[serde(default)]
    #[api(proto = 6, proto_value)]
    pub last_update_time: Option<Time>,
    /// When the status last changed.
    #[serde(default)]
    #[api(proto = 7, proto_value)]
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

/// The `kubectl get deployments` row (kube-apiserver's `printDeployment`).
fn deployment_cells(deploy: &Deployment) -> Vec<Value> {
    let status = &deploy.status;
    let desired = deploy.spec.replicas.unwrap_or(0);
    let containers = &deploy.spec.template.spec.containers;
    let names: Vec<&str> = containers.iter().map(|c| c.name.as_str()).collect();
    let images: Vec<&str> = containers
        .iter()
        .map(|c| c.image.as_deref().unwrap_or_default())
        .collect();
    vec![
        json!(format!("{}/{desired}", status.ready_replicas.unwrap_or(0))),
        json!(status.updated_replicas.unwrap_or(0)),
        json!(status.available_replicas.unwrap_or(0)),
        json!(deploy.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(names.join(",")),
        json!(images.join(",")),
        json!(format_selector(deploy.spec.selector.as_ref())),
    ]
}

/// The `Warning` headers of a write: on create a name that is no DNS label;
/// the pod template's on create and when the spec or the annotations change.
fn deployment_warnings(d: &Deployment, old: Option<&Deployment>) -> Vec<String> {
    let mut warnings: Vec<String> = Vec::new();
    if old.is_none() {
        warnings.extend(super::warnings::pod_name_source_warning(&d.metadata));
    }
    // The generation, which gates the template's warnings, also moves when
    // the annotations change (they are copied to the ReplicaSets): judge the
    // template then as on create.
    let annotations = |meta: &ObjectMeta| meta.annotations.clone().unwrap_or_default();
    let old_spec = old
        .filter(|o| annotations(&o.metadata) == annotations(&d.metadata))
        .map(|o| &o.spec);
    warnings.extend(crate::core::v1::pod::warnings::template_warnings(
        &["spec", "template"],
        Some(&d.spec.template),
        &d.spec,
        old_spec,
    ));
    warnings
}
