//! `autoscaling/v2`.

pub mod horizontalpodautoscaler;
pub mod metric;
mod validation;

pub use horizontalpodautoscaler::HorizontalPodAutoscaler;
