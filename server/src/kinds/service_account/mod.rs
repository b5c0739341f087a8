//! Service accounts beyond the common strategy: the tokens issued for them.

pub mod token;
