//! `batch/v1`.

pub mod cronjob;
pub mod job;

pub use cronjob::CronJob;
pub use job::Job;
