//! The emit stage: one module per generated artifact.

pub mod api_type;
pub mod convert;
pub mod openapi;
pub mod proto;
pub mod registration;
pub mod resource;

#[cfg(test)]
mod tests;
