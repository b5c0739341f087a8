//! `batch/v1`.
