//! Leases: time-limited holds used for leader election and heartbeats.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{MicroTime, ObjectMeta};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::null_as_default;

/// A lock held by one identity until it stops renewing it: leader election of
/// controllers, node and API server heartbeats.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "coordination.k8s.io",
    version = "v1",
    plural = "leases",
    storage_prefix = "leases",
    generation = false,
    printer_column(name = "Holder", type = "string", json_path = ".spec.holderIdentity",
        description = "Identity currently holding the lease."),
    table_cells = lease_cells
)]
pub struct Lease {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// Who holds the lease and until when.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: LeaseSpec,
}

/// The state of a lease, written by its holder and by candidates.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_lease_spec)]
pub struct LeaseSpec {
    /// Identity of the current holder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub holder_identity: Option<String>,
    /// Seconds after the last renewal that candidates must wait before taking
    /// the lease over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub lease_duration_seconds: Option<i32>,
    /// When the current holder acquired the lease (microsecond precision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub acquire_time: Option<MicroTime>,
    /// When the holder last renewed the lease (microsecond precision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub renew_time: Option<MicroTime>,
    /// How many times the lease has changed holders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub lease_transitions: Option<i32>,
    /// How coordinated leader election picks the next holder, e.g.
    /// `OldestEmulationVersion` (needs the CoordinatedLeaderElection feature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 6)]
    pub strategy: Option<String>,
    /// Identity coordinated leader election wants as the next holder; the
    /// current holder should give the lease up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub preferred_holder: Option<String>,
}

/// The `kubectl get leases` row (kube-apiserver's `printLease`): an empty
/// holder when none is set.
fn lease_cells(lease: &Lease) -> Vec<Value> {
    vec![json!(
        lease.spec.holder_identity.as_deref().unwrap_or_default()
    )]
}
