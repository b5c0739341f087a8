//! `policy/v1`.
