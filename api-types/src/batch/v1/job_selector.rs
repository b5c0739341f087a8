//! The job strategy's `PrepareForCreate`: unless the client manages the
//! selector itself (`manualSelector: true`), a job selects its pods by its own
//! uid, and its template labels the pods with the uid and the job's name.

use std::collections::BTreeMap;

use super::job::Job;

/// Label with the job's uid (and its label-prefix-less twin, kept for old clients).
const CONTROLLER_UID_LABELS: [&str; 2] = ["controller-uid", "batch.kubernetes.io/controller-uid"];
/// Label with the job's name (and its twin).
const JOB_NAME_LABELS: [&str; 2] = ["job-name", "batch.kubernetes.io/job-name"];
/// The label the generated selector matches.
const SELECTOR_LABEL: &str = "batch.kubernetes.io/controller-uid";

/// The `prepare_create` hook of Job (PrepareForCreate). `manualSelector` reads as false when unset; once
/// the job has its uid, the uid label is added to the selector and the uid and
/// name labels to the template, each unless already there (labels the client
/// set are kept; a conflict is left to validation, as upstream).
pub(super) fn prepare_job(job: &mut Job) {
    if *job.spec.manual_selector.get_or_insert(false) {
        return;
    }
    let Some(uid) = job.metadata.uid.clone().filter(|u| !u.is_empty()) else {
        return;
    };
    let name = job.metadata.name.clone().unwrap_or_default();
    let labels = job
        .spec
        .template
        .metadata
        .labels
        .get_or_insert_with(BTreeMap::new);
    for key in JOB_NAME_LABELS {
        labels.entry(key.to_owned()).or_insert_with(|| name.clone());
    }
    for key in CONTROLLER_UID_LABELS {
        labels.entry(key.to_owned()).or_insert_with(|| uid.clone());
    }
    let selector = job.spec.selector.get_or_insert_with(Default::default);
    selector
        .match_labels
        .get_or_insert_with(BTreeMap::new)
        .entry(SELECTOR_LABEL.to_owned())
        .or_insert(uid);
}
