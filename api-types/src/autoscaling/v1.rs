//! `autoscaling/v1`.

pub mod conversion;
pub mod horizontalpodautoscaler;
pub mod metric;
pub mod scale;

pub use horizontalpodautoscaler::HorizontalPodAutoscaler;
pub use scale::{Scale, ScaleSpec, ScaleStatus};
