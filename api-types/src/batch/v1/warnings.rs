//! The `Warning` headers of Job and CronJob writes, as kube-apiserver 1.32
//! sends them: the name pods are named after, an Indexed job too large for its
//! completed indexes to be tracked reliably, and the pod template's warnings.

use kapi_runtime::ApiType;

use super::job::JobSpec;
use super::{CronJob, Job};
use crate::apps::v1::warnings::pod_name_source_warning;
use crate::core::v1::pod::warnings::template_warnings;

/// Above this many completions (with more than `PARALLELISM_SOFT_LIMIT`
/// pods at once), an Indexed job may lose track of its failed indexes.
const COMPLETIONS_SOFT_LIMIT: i32 = 100_000;
const PARALLELISM_SOFT_LIMIT: i32 = 10_000;

/// The `Job` hook: on create the name and the spec; on update the spec when
/// it changed (the generation moves then).
pub(super) fn job_warnings(job: &Job, old: Option<&Job>) -> Vec<String> {
    let mut warnings: Vec<String> = Vec::new();
    match old {
        None => warnings.extend(pod_name_source_warning(&job.metadata)),
        Some(old) if job.spec.semantic_eq(&old.spec) => return warnings,
        Some(_) => {}
    }
    warnings.extend(job_spec_warnings(&["spec"], &job.spec));
    warnings
}

/// The `CronJob` hook: as a Job's, for the job template, on create and on an
/// update that changed the cron job's spec (a new schedule counts too).
pub(super) fn cronjob_warnings(cj: &CronJob, old: Option<&CronJob>) -> Vec<String> {
    let mut warnings: Vec<String> = Vec::new();
    match old {
        None => warnings.extend(pod_name_source_warning(&cj.metadata)),
        Some(old) if cj.spec.semantic_eq(&old.spec) => return warnings,
        Some(_) => {}
    }
    let path = ["spec", "jobTemplate", "spec"];
    warnings.extend(job_spec_warnings(&path, &cj.spec.job_template.spec));
    warnings
}

/// The warnings of a job spec at `path`: its size when Indexed, then its pod
/// template's.
fn job_spec_warnings(path: &[&str], spec: &JobSpec) -> Vec<String> {
    let mut warnings = Vec::new();
    if spec.completion_mode.as_deref() == Some("Indexed")
        && spec.completions.unwrap_or(0) > COMPLETIONS_SOFT_LIMIT
        && spec.parallelism.unwrap_or(0) > PARALLELISM_SOFT_LIMIT
    {
        warnings.push(format!(
            "{}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail",
            path.join(".")
        ));
    }
    let template_path: Vec<&str> = path.iter().copied().chain(["template"]).collect();
    warnings.extend(template_warnings(
        &template_path,
        Some(&spec.template),
        spec,
        None,
    ));
    warnings
}
