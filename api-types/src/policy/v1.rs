//! `policy/v1`.

pub mod eviction;
pub mod poddisruptionbudget;
mod validation;

pub use eviction::Eviction;
pub use poddisruptionbudget::PodDisruptionBudget;
