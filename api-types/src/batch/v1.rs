//! `batch/v1`.

pub mod cronjob;
mod defaults;
pub mod job;
mod job_selector;
mod validation;
mod warnings;

pub use cronjob::CronJob;
pub use job::Job;
