//! The core API group (`""`, served under `/api`).

pub mod v1;
