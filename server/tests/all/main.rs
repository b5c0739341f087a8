//! The server's HTTP behaviour, in process.
//!
//! One test binary per crate: each integration-test binary links the whole API, so
//! one binary with a module per topic links once instead of once per file.

mod common;

mod admission;
mod controllers;
mod field_validation;
mod http;
mod layers;
mod lifecycle;
mod patch_edges;
mod protobuf;
mod services;
mod storage_media_type;
mod strategies;
mod subresources;
