//! The built-in Kubernetes kinds as annotated Rust structs: `core/v1` (Namespace,
//! ConfigMap, Secret, Node, Pod, Service, Event) and `apps/v1` (Deployment).
//!
//! Field names, field order and omission rules follow the Go types of
//! `k8s.io/api` (release 1.33), so that objects leave the server byte for byte as
//! Kubernetes writes them. Every kind registers itself in the scheme through
//! `#[derive(Resource)]`; [`install`] is the reference that keeps this crate linked.

#![warn(missing_docs)]

pub mod apps;
pub mod core;
mod go_json;
mod labels;

pub use kapi_runtime::meta;

/// Adds every kind of this crate to `scheme`: the core group (`""`) and `apps`.
///
/// Besides filling the scheme, calling this function is what keeps the kinds of
/// this crate in the final binary: the linker drops a crate nobody refers to, and
/// with it the link-time registrations of its kinds.
pub fn install(scheme: &mut kapi_runtime::scheme::Scheme) {
    scheme.install_group("");
    scheme.install_group("apps");
}
