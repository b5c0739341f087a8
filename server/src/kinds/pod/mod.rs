//! Pods beyond the common strategy: the actions the scheduler and
//! `kubectl drain` take on them.

pub mod binding;
pub mod eviction;
