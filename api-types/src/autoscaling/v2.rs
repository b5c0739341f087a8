//! `autoscaling/v2`.

pub mod horizontalpodautoscaler;
pub mod metric;

pub use horizontalpodautoscaler::HorizontalPodAutoscaler;
