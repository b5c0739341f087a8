//! The widget example served by the `kapi` binary, driven by kubectl.
//!
//! One test binary per crate: each integration-test binary links the whole API, so
//! one binary with a module per topic links once instead of once per file.

mod crd;
mod extension_server;
mod extensions;
mod kubectl;
mod versions;
