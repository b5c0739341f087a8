//! CronJobs: Jobs created on a repeating schedule.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::job::JobTemplateSpec;
use crate::core::v1::podtemplate::container_cells;
use crate::core::v1::reference::ObjectReference;
use crate::go_json::{null_as_default, omitempty};
use crate::labels::format_selector;

/// Creates a Job from its template at each time its cron schedule names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "batch",
    version = "v1",
    plural = "cronjobs",
    storage_prefix = "cronjobs",
    short_names("cj"),
    categories("all"),
    status,
    printer_column(name = "Schedule", type = "string", json_path = ".spec.schedule",
        description = "The cron schedule."),
    printer_column(name = "Timezone", type = "string", json_path = ".spec.timeZone",
        description = "Time zone of the schedule, or <none> for the controller's own."),
    printer_column(name = "Suspend", type = "boolean", json_path = ".spec.suspend",
        description = "Whether new runs are held back."),
    printer_column(name = "Active", type = "integer", json_path = ".status.active",
        description = "Number of jobs of the cron job still running."),
    printer_column(name = "Last Schedule", type = "date", json_path = ".status.lastScheduleTime",
        description = "Time since a job was last scheduled."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the cron job was created."),
    printer_column(name = "Containers", type = "string",
        json_path = ".spec.jobTemplate.spec.template.spec.containers[*].name", priority = 1,
        description = "Names of the job template's containers."),
    printer_column(name = "Images", type = "string",
        json_path = ".spec.jobTemplate.spec.template.spec.containers[*].image", priority = 1,
        description = "Images of the job template's containers."),
    printer_column(name = "Selector", type = "string",
        json_path = ".spec.jobTemplate.spec.selector", priority = 1,
        description = "Label selector of the job template."),
    warnings = super::warnings::cronjob_warnings,
    table_cells = cronjob_cells,
    validate_update = super::validation::validate_cron_job_update
)]
#[api(defaults = super::defaults::default_cron_job)]
pub struct CronJob {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The schedule and the job to create.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: CronJobSpec,
    /// Running jobs and past run times, as last observed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: CronJobStatus,
}

/// When and how a cron job runs its jobs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_cron_job_spec)]
pub struct CronJobSpec {
    /// The schedule in cron syntax, e.g. `30 2 * * 1-5` or `@hourly`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub schedule: String,
    /// IANA time zone of the schedule, e.g. `Europe/Berlin`; the controller's
    /// local zone when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub time_zone: Option<String>,
    /// Seconds after a missed scheduled time during which the run may still
    /// start; later runs are counted as missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub starting_deadline_seconds: Option<i64>,
    /// What to do when a run is due while the previous one still runs: `Allow`
    /// (the default), `Forbid` (skip the new run) or `Replace` (stop the old one).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub concurrency_policy: Option<String>,
    /// True holds back future runs; running jobs are left alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    #[api(default = false)]
    pub suspend: Option<bool>,
    /// The job created at each run.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 5)]
    #[api(required)]
    pub job_template: JobTemplateSpec,
    /// Successful finished jobs kept; 3 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6)]
    #[api(default = 3)]
    pub successful_jobs_history_limit: Option<i32>,
    /// Failed finished jobs kept; 1 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    #[api(default = 1)]
    pub failed_jobs_history_limit: Option<i32>,
}

/// The observed state of a cron job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CronJobStatus {
    /// The jobs of this cron job that are still running.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub active: Option<Vec<ObjectReference>>,
    /// When a job was last scheduled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub last_schedule_time: Option<Time>,
    /// When a job last completed successfully.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub last_successful_time: Option<Time>,
}

/// The `kubectl get cronjobs` row (kube-apiserver's `printCronJob`): `<none>`
/// for an unset time zone or last schedule, `True`/`False`/`<unset>` for suspend.
fn cronjob_cells(cj: &CronJob) -> Vec<Value> {
    let spec = &cj.spec;
    let suspend = match spec.suspend {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    let last_schedule = match cj.status.last_schedule_time {
        Some(time) => time.to_string(),
        None => "<none>".to_owned(),
    };
    let job = &spec.job_template.spec;
    let (names, images) = container_cells(&job.template.spec.containers);
    vec![
        json!(spec.schedule),
        json!(spec.time_zone.as_deref().unwrap_or("<none>")),
        json!(suspend),
        json!(cj.status.active.as_ref().map_or(0, Vec::len)),
        json!(last_schedule),
        json!(cj.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(names),
        json!(images),
        json!(format_selector(job.selector.as_ref())),
    ]
}
