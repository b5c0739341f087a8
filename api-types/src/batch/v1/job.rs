//! Jobs: pods that run to completion, retried until enough of them succeed.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{LabelSelector, ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::v1::pod::PodTemplateSpec;
use crate::core::v1::podtemplate::container_cells;
use crate::go_json::{null_as_default, omitempty};
use crate::labels::format_selector;

/// Runs pods from a template until a number of them finish successfully, or
/// gives up after too many failures or too much time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "batch",
    version = "v1",
    plural = "jobs",
    storage_prefix = "jobs",
    orphan_dependents,
    selectable_fields("status.successful"),
    field_label = job_field_label,
    categories("all"),
    status,
    printer_column(name = "Status", type = "string", json_path = ".status.conditions",
        description = "Complete, Failed, Terminating, Suspended, FailureTarget or Running."),
    printer_column(name = "Completions", type = "string", json_path = ".status.succeeded",
        description = "Succeeded pods out of the completions wanted."),
    printer_column(name = "Duration", type = "date", json_path = ".status.startTime",
        description = "Time from the start to completion, or since the start while running."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the job was created."),
    printer_column(name = "Containers", type = "string",
        json_path = ".spec.template.spec.containers[*].name", priority = 1,
        description = "Names of the template's containers."),
    printer_column(name = "Images", type = "string",
        json_path = ".spec.template.spec.containers[*].image", priority = 1,
        description = "Images of the template's containers."),
    printer_column(name = "Selector", type = "string", json_path = ".spec.selector", priority = 1,
        description = "Label selector of the job's pods."),
    prepare_create = super::job_selector::prepare_job,
    validate_update = super::validation::validate_job_update,
    warnings = super::warnings::job_warnings,
    table_cells = job_cells
)]
#[api(defaults = super::defaults::default_job)]
pub struct Job {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The pods to run and when the job is done.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: JobSpec,
    /// Progress of the job, as last observed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: JobStatus,
}

/// The desired run of a job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_job_spec)]
pub struct JobSpec {
    /// Most pods running at the same time; 1 when unset, 0 pauses the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub parallelism: Option<i32>,
    /// Successful pods (or, for `Indexed` jobs, indexes) that complete the job;
    /// unset means any one success completes it once all pods have ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub completions: Option<i32>,
    /// Seconds the job may be active, counted from its start, before its pods are
    /// killed and it fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub active_deadline_seconds: Option<i64>,
    /// Rules that decide, from a failed pod's exit codes or conditions, whether
    /// the failure counts, is ignored, or fails the index or the whole job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 11)]
    pub pod_failure_policy: Option<PodFailurePolicy>,
    /// Rules that declare an `Indexed` job successful before every index has
    /// succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 16)]
    pub success_policy: Option<SuccessPolicy>,
    /// Pod retries before the job is marked failed; 6 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub backoff_limit: Option<i32>,
    /// For `Indexed` jobs: retries allowed per index, each index failing on its
    /// own once exceeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 12)]
    pub backoff_limit_per_index: Option<i32>,
    /// With `backoffLimitPerIndex`: failed indexes after which the whole job
    /// fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 13)]
    pub max_failed_indexes: Option<i32>,
    /// Labels of the job's pods; generated from the job's UID unless
    /// `manualSelector` is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub selector: Option<LabelSelector>,
    /// True when the user, not the system, picks the selector and pod labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub manual_selector: Option<bool>,
    /// The pods to run; the restart policy must be `Never` or `OnFailure`.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 6)]
    #[api(required)]
    pub template: PodTemplateSpec,
    /// Seconds after the job finishes (completes or fails) before it is deleted
    /// automatically; never when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub ttl_seconds_after_finished: Option<i32>,
    /// `NonIndexed` (any successes count, the default) or `Indexed` (each index
    /// from 0 to completions-1 must succeed once; pods learn their index).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    pub completion_mode: Option<String>,
    /// True stops creating pods and deletes the running ones until set back to
    /// false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10)]
    pub suspend: Option<bool>,
    /// When a replacement pod may be created: `TerminatingOrFailed` (as soon as
    /// the old one terminates) or `Failed` (once it has fully failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 14)]
    pub pod_replacement_policy: Option<String>,
    /// The controller that reconciles the job, when not the built-in one
    /// (`kubernetes.io/job-controller`); cannot change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 15)]
    pub managed_by: Option<String>,
}

/// How pod failures are handled, as an ordered list of rules (the first
/// matching rule applies).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodFailurePolicy {
    /// The rules, evaluated in order.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required, list_type = "atomic")]
    #[api(proto = 1)]
    pub rules: Vec<PodFailurePolicyRule>,
}

/// One rule of a pod failure policy: a requirement on exit codes or on pod
/// conditions, and what to do when a failed pod meets it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodFailurePolicyRule {
    /// `FailJob`, `FailIndex`, `Ignore` (not counted against the backoff limit)
    /// or `Count` (counted as usual).
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub action: String,
    /// Exit codes of the pod's containers that match the rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub on_exit_codes: Option<PodFailurePolicyOnExitCodesRequirement>,
    /// Pod conditions that match the rule (any of them).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub on_pod_conditions: Option<Vec<PodFailurePolicyOnPodConditionsPattern>>,
}

/// A requirement on the exit codes of a failed pod's containers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodFailurePolicyOnExitCodesRequirement {
    /// Only this container's exit code is checked; all containers when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub container_name: Option<String>,
    /// `In` (an exit code is one of `values`) or `NotIn`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub operator: String,
    /// Exit codes, sorted and without repeats; 0 is not allowed with `In`.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required, list_type = "set")]
    #[api(proto = 3)]
    pub values: Vec<i32>,
}

/// A pod condition that a failed pod must carry to match a rule.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::default_pod_conditions_pattern)]
pub struct PodFailurePolicyOnPodConditionsPattern {
    /// The condition type, e.g. `DisruptionTarget`.
    #[serde(default, rename = "type")]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub type_: String,
    /// The status the condition must have: `True`, `False` or `Unknown`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub status: String,
}

/// When an `Indexed` job counts as successful early: when any of its rules is
/// met.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SuccessPolicy {
    /// The rules; the first one met completes the job.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required, list_type = "atomic")]
    #[api(proto = 1)]
    pub rules: Vec<SuccessPolicyRule>,
}

/// One success rule: a set of indexes, a count of succeeded indexes, or both.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SuccessPolicyRule {
    /// Indexes that must succeed, as sorted intervals like `1,3-5,7`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub succeeded_indexes: Option<String>,
    /// How many indexes (of `succeededIndexes` if given) must succeed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub succeeded_count: Option<i32>,
}

/// The observed progress of a job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct JobStatus {
    /// Conditions such as `Complete`, `Failed`, `Suspended` or `FailureTarget`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(
        list_type = "atomic",
        patch_strategy = "merge",
        patch_merge_key = "type"
    )]
    #[api(proto = 1)]
    pub conditions: Option<Vec<JobCondition>>,
    /// When the controller started the job (or last resumed it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub start_time: Option<Time>,
    /// When the job completed successfully; unset for failed jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub completion_time: Option<Time>,
    /// Pods pending or running and not terminating.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub active: Option<i32>,
    /// Pods that reached phase `Succeeded`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub succeeded: Option<i32>,
    /// Pods that reached phase `Failed`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub failed: Option<i32>,
    /// Pods terminating (with a deletion timestamp) but not yet failed or
    /// succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 11)]
    pub terminating: Option<i32>,
    /// For `Indexed` jobs: succeeded indexes as sorted intervals, e.g. `1,3-5,7`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 7)]
    pub completed_indexes: Option<String>,
    /// With `backoffLimitPerIndex`: failed indexes as sorted intervals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10)]
    pub failed_indexes: Option<String>,
    /// UIDs of finished pods the controller has not yet added to `succeeded` or
    /// `failed` (while it removes their tracking finalizers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub uncounted_terminated_pods: Option<UncountedTerminatedPods>,
    /// Active pods that are ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    pub ready: Option<i32>,
}

/// UIDs of finished pods not yet counted in a job's status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct UncountedTerminatedPods {
    /// Pods that succeeded.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "set")]
    #[api(proto = 1)]
    pub succeeded: Option<Vec<String>>,
    /// Pods that failed.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "set")]
    #[api(proto = 2)]
    pub failed: Option<Vec<String>>,
}

/// One condition of a job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct JobCondition {
    /// `Complete`, `Failed`, `Suspended`, `FailureTarget` or `SuccessCriteriaMet`.
    #[serde(default, rename = "type")]
    #[api(required)]
    #[api(proto = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub status: String,
    /// When the condition was last checked.
    #[serde(default)]
    #[api(proto = 3, proto_value)]
    pub last_probe_time: Option<Time>,
    /// When the status last changed.
    #[serde(default)]
    #[api(proto = 4, proto_value)]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change, e.g. `BackoffLimitExceeded`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub reason: Option<String>,
    /// Human-readable detail of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub message: Option<String>,
}

/// The metadata and spec of the jobs a CronJob creates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct JobTemplateSpec {
    /// Labels and annotations copied to each job.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// Spec of each job.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: JobSpec,
}

/// Whether the first condition of `type_` in a job's status is `True`.
fn has_condition(status: &JobStatus, type_: &str) -> bool {
    status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == type_)
        .is_some_and(|c| c.status == "True")
}

/// The `kubectl get jobs` row (kube-apiserver's `printJob`). A running job's
/// Duration cell is its start time, which the `date` column turns into the time
/// elapsed since; a completed job's is the span from start to completion.
fn job_cells(job: &Job) -> Vec<Value> {
    let (spec, status) = (&job.spec, &job.status);
    let state = if has_condition(status, "Complete") {
        "Complete"
    } else if has_condition(status, "Failed") {
        "Failed"
    } else if job.metadata.deletion_timestamp.is_some() {
        "Terminating"
    } else if has_condition(status, "Suspended") {
        "Suspended"
    } else if has_condition(status, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let succeeded = status.succeeded.unwrap_or(0);
    let parallelism = spec.parallelism.unwrap_or(0);
    let completions = match spec.completions {
        Some(completions) => format!("{succeeded}/{completions}"),
        None if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
        None => format!("{succeeded}/1"),
    };
    let duration = match (status.start_time, status.completion_time) {
        (None, _) => String::new(),
        (Some(start), None) => start.to_string(),
        (Some(start), Some(end)) => human_duration(end.0.as_second() - start.0.as_second()),
    };
    let (names, images) = container_cells(&spec.template.spec.containers);
    vec![
        json!(state),
        json!(completions),
        json!(duration),
        json!(job.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(names),
        json!(images),
        json!(format_selector(spec.selector.as_ref())),
    ]
}

/// A span of seconds as kubectl prints durations: two significant units at
/// most (`45s`, `3m20s`, `5h10m`, `3d4h`, `2y30d`).
fn human_duration(seconds: i64) -> String {
    let (minutes, hours) = (seconds / 60, seconds / 3600);
    let (days, years) = (hours / 24, hours / 24 / 365);
    let pair = |big: i64, big_unit: &str, small: i64, small_unit: &str| {
        if small == 0 {
            format!("{big}{big_unit}")
        } else {
            format!("{big}{big_unit}{small}{small_unit}")
        }
    };
    match () {
        _ if seconds < -1 => "<invalid>".to_owned(),
        _ if seconds < 0 => "0s".to_owned(),
        _ if seconds < 120 => format!("{seconds}s"),
        _ if minutes < 10 => pair(minutes, "m", seconds % 60, "s"),
        _ if minutes < 180 => format!("{minutes}m"),
        _ if hours < 8 => pair(hours, "h", minutes % 60, "m"),
        _ if hours < 48 => format!("{hours}h"),
        _ if hours < 24 * 8 => pair(days, "d", hours % 24, "h"),
        _ if hours < 24 * 365 * 2 => format!("{days}d"),
        _ if hours < 24 * 365 * 8 => pair(years, "y", days % 365, "d"),
        _ => format!("{years}y"),
    }
}

/// A Job's one field selector, `status.successful`, reads `status.succeeded`
/// (absent is 0), as upstream's `JobToSelectableFields`.
fn job_field_label(job: &Job, label: &str) -> Option<String> {
    (label == "status.successful").then(|| job.status.succeeded.unwrap_or(0).to_string())
}

#[cfg(test)]
mod tests {
    use super::human_duration;

    #[test]
    fn durations_read_like_kubectl() {
        assert_eq!(human_duration(45), "45s");
        assert_eq!(human_duration(200), "3m20s");
        assert_eq!(human_duration(601), "10m");
        assert_eq!(human_duration(5 * 3600 + 600), "5h10m");
        assert_eq!(human_duration(30 * 3600), "30h");
        assert_eq!(human_duration(3 * 86400 + 4 * 3600), "3d4h");
        assert_eq!(human_duration(100 * 86400), "100d");
        assert_eq!(human_duration(3 * 365 * 86400), "3y");
    }
}
