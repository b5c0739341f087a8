//! `policy/v1`.

pub mod eviction;
pub mod poddisruptionbudget;

pub use eviction::Eviction;
pub use poddisruptionbudget::PodDisruptionBudget;
