//! The defaults of batch/v1 that depend on other fields
//! (k8s.io/kubernetes/pkg/apis/batch/v1/defaults.go); plain values are
//! `#[api(default = ...)]` on the fields.

use super::cronjob::CronJob;
use super::job::{Job, PodFailurePolicyOnPodConditionsPattern};
use crate::defaulting::default_text;

/// `SetDefaults_Job`. A job with neither completions nor parallelism runs one pod
/// to completion; with a per-index backoff limit the global one is unlimited;
/// failed pods are replaced only once terminated, or only once failed under a
/// pod failure policy; the template's labels stand in for the job's own empty
/// labels.
pub(super) fn default_job(job: &mut Job) {
    let spec = &mut job.spec;
    if spec.completions.is_none() && spec.parallelism.is_none() {
        spec.completions = Some(1);
    }
    spec.parallelism.get_or_insert(1);
    if spec.backoff_limit.is_none() {
        spec.backoff_limit = Some(if spec.backoff_limit_per_index.is_some() {
            i32::MAX
        } else {
            6
        });
    }
    if let Some(labels) = spec.template.metadata.labels.as_ref()
        && job.metadata.labels.as_ref().is_none_or(|l| l.is_empty())
    {
        job.metadata.labels = Some(labels.clone());
    }
    spec.completion_mode
        .get_or_insert_with(|| "NonIndexed".to_owned());
    spec.suspend.get_or_insert(false);
    // Since 1.29 (kubernetes#120206): the registry's selector generation
    // reads it, and the writer owns it.
    spec.manual_selector.get_or_insert(false);
    if spec.pod_replacement_policy.is_none() {
        let policy = if spec.pod_failure_policy.is_some() {
            "Failed"
        } else {
            "TerminatingOrFailed"
        };
        spec.pod_replacement_policy = Some(policy.to_owned());
    }
}

/// A pod condition a failure policy rule matches is `True` unless it says.
pub(super) fn default_pod_conditions_pattern(pattern: &mut PodFailurePolicyOnPodConditionsPattern) {
    if pattern.status.is_empty() {
        pattern.status = "True".to_owned();
    }
}

/// `SetDefaults_CronJob`: runs may overlap unless the policy says otherwise.
pub(super) fn default_cron_job(cron: &mut CronJob) {
    default_text(&mut cron.spec.concurrency_policy, "Allow");
}
