//! `batch/v1`.

pub mod cronjob;
mod defaults;
pub mod job;

pub use cronjob::CronJob;
pub use job::Job;
