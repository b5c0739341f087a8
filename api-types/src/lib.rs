//! The built-in Kubernetes kinds as annotated Rust structs: the GA groups of
//! Kubernetes 1.32, one module per group and version (`core::v1`, `apps::v1`,
//! `rbac::v1`, ...), named after k8s.io/api's package directories (the OpenAPI
//! definition names follow from them); `apiextensions` and `apiregistration`
//! are the Go packages of apiextensions-apiserver and kube-aggregator.
//!
//! Field names, field order, omission rules and protobuf numbers follow the Go
//! types of `k8s.io/api` 1.32 (and of those two modules), so that objects leave the server byte for byte as
//! Kubernetes writes them. Every kind registers itself in the scheme through
//! `#[derive(Resource)]`; [`install`] is the reference that keeps this crate linked.

#![warn(missing_docs)]

pub mod admissionregistration;
pub mod apiextensions;
pub mod apiregistration;
pub mod apps;
pub mod authentication;
pub mod authorization;
pub mod autoscaling;
pub mod batch;
pub mod certificates;
pub mod coordination;
pub mod core;
mod defaulting;
pub mod discovery;
pub mod events;
pub mod flowcontrol;
mod go_json;
mod labels;
pub mod networking;
pub mod node;
pub mod policy;
pub mod rbac;
pub mod scheduling;
pub mod storage;
mod validation;

pub use kapi_runtime::meta;

/// Adds every kind of this crate to `scheme`: the core group (`""`) and every named group.
///
/// Besides filling the scheme, calling this function is what keeps the kinds of
/// this crate in the final binary: the linker drops a crate nobody refers to, and
/// with it the link-time registrations of its kinds.
pub fn install(scheme: &mut kapi_runtime::scheme::Scheme) {
    scheme.install_group("");
    scheme.install_group("apps");
    scheme.install_group("admissionregistration.k8s.io");
    scheme.install_group("apiextensions.k8s.io");
    scheme.install_group("apiregistration.k8s.io");
    scheme.install_group("authentication.k8s.io");
    scheme.install_group("authorization.k8s.io");
    scheme.install_group("autoscaling");
    scheme.install_group("batch");
    scheme.install_group("certificates.k8s.io");
    scheme.install_group("coordination.k8s.io");
    scheme.install_group("discovery.k8s.io");
    scheme.install_group("events.k8s.io");
    scheme.install_group("flowcontrol.apiserver.k8s.io");
    scheme.install_group("networking.k8s.io");
    scheme.install_group("node.k8s.io");
    scheme.install_group("policy");
    scheme.install_group("rbac.authorization.k8s.io");
    scheme.install_group("scheduling.k8s.io");
    scheme.install_group("storage.k8s.io");
    // The bodies of subresources that take another kind: `/scale`,
    // `pods/<name>/eviction`, `serviceaccounts/<name>/token`.
    use kapi_runtime::scheme::BodyEntry;
    scheme.add_body(BodyEntry::of::<autoscaling::v1::Scale>(
        "autoscaling",
        "v1",
        "Scale",
    ));
    scheme.add_body(BodyEntry::of::<policy::v1::Eviction>(
        "policy", "v1", "Eviction",
    ));
    scheme.add_body(BodyEntry::of::<authentication::v1::TokenRequest>(
        "authentication.k8s.io",
        "v1",
        "TokenRequest",
    ));
}
