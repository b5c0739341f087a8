//! `autoscaling/v1`.
