//! `batch/v1`.

pub mod cronjob;
pub mod job;
mod validation;

pub use cronjob::CronJob;
pub use job::Job;
