//! The kinds' integration tests: wire formats, defaults, validation, conversions,
//! tables and the comparisons with upstream.
//!
//! One test binary per crate: each integration-test binary links the whole API, so
//! one binary with a module per topic links once instead of once per file.

mod common;
mod support;

mod conversions;
mod defaults;
mod kinds_access;
mod kinds_admission;
mod kinds_autoscaling;
mod kinds_core_a;
mod kinds_core_b;
mod kinds_kinds;
mod kinds_storage_net;
mod kinds_workloads;
mod kubectl_output;
mod manifests;
mod openapi_routes;
mod openapi_upstream;
mod protobuf_go_bytes;
mod protobuf_hostile;
mod protobuf_random_objects;
mod protobuf_upstream;
mod registered_kinds;
mod tables;
mod validation;
mod warnings;
mod wire_format;
