//! `events.k8s.io/v1`.

pub mod conversion;
pub mod event;

pub use event::Event;
