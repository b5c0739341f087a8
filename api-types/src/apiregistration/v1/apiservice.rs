//! APIServices: which server serves an API group version, the API server
//! itself or an extension API server behind a Service.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::ByteString;
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::{null_as_default, omitempty};

/// Registers one API group version, named `<version>.<group>`, with the
/// aggregation layer: served locally, or proxied to an extension API server
/// behind a Service.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "apiregistration.k8s.io",
    version = "v1",
    plural = "apiservices",
    storage_json,
    reset_status = "metadata, spec",
    categories("api-extensions"),
    cluster_scoped,
    status,
    generation = false,
    name_format = "path-segment",
    printer_column(name = "Service", type = "string", json_path = ".spec.service",
        description = "The Service behind the API as namespace/name, or Local."),
    printer_column(name = "Available", type = "string", json_path = ".status.conditions",
        description = "Whether the API is available, with the reason when it is not."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the APIService was created."),
    table_cells = apiservice_cells
)]
#[api(validate = super::validation::validate_api_service)]
pub struct APIService {
    /// Name (`<version>.<group>`), labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The group version and who serves it.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: APIServiceSpec,
    /// Whether the API is reachable, as last checked.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: APIServiceStatus,
}

/// The group version an APIService registers, where its server is, how to
/// trust it, and where the version ranks in discovery.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct APIServiceSpec {
    /// The Service in front of the extension API server; absent when the
    /// API server serves the group version itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub service: Option<ServiceReference>,
    /// The API group, e.g. `metrics.k8s.io`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub group: Option<String>,
    /// The API version, e.g. `v1beta1`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub version: Option<String>,
    /// Skips verifying the extension server's TLS certificate; discouraged,
    /// and not allowed together with `caBundle`.
    #[serde(
        default,
        rename = "insecureSkipTLSVerify",
        skip_serializing_if = "omitempty"
    )]
    #[api(proto = 4)]
    pub insecure_skip_tls_verify: Option<bool>,
    /// PEM-encoded CA certificates that verify the extension server's
    /// certificate (base64 in JSON); the cluster's roots when empty.
    #[serde(default, skip_serializing_if = "no_bytes")]
    #[api(list_type = "atomic")]
    #[api(proto = 5)]
    pub ca_bundle: Option<ByteString>,
    /// Rank of the group among groups in discovery: higher comes first; the
    /// group's rank is the highest minimum among its versions' APIServices.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 7)]
    pub group_priority_minimum: i32,
    /// Rank of this version within its group: higher comes first; ties are
    /// broken by Kubernetes version order of the names.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 8)]
    pub version_priority: i32,
}

/// Go's `omitempty` on a `[]byte`: JSON leaves out an empty slice, while
/// protobuf still writes a non-nil one.
fn no_bytes(bytes: &Option<ByteString>) -> bool {
    bytes.as_ref().is_none_or(|b| b.0.is_empty())
}

/// Points at a Service by namespace, name and port.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ServiceReference {
    /// Namespace of the Service.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub namespace: Option<String>,
    /// Name of the Service.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub name: Option<String>,
    /// Port of the Service to connect to (1-65535); 443 by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    #[api(default = 443)]
    pub port: Option<i32>,
}

/// What was last observed of an APIService.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct APIServiceStatus {
    /// Current conditions, one per type (`Available`).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("type"))]
    #[api(patch_strategy = "merge", patch_merge_key = "type")]
    #[api(proto = 1)]
    pub conditions: Option<Vec<APIServiceCondition>>,
}

/// One condition of an APIService.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct APIServiceCondition {
    /// The condition type: `Available`.
    #[serde(default, rename = "type")]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub status: String,
    /// When the status last changed.
    #[serde(default)]
    #[api(proto = 3, proto_value)]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change, e.g. `Local`,
    /// `ServiceNotFound`, `FailedDiscoveryCheck`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub reason: Option<String>,
    /// Human-readable detail of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub message: Option<String>,
}

/// The `kubectl get apiservices` row (kube-aggregator's table): the Service as
/// `namespace/name` or `Local`, the `Available` condition's status with its
/// reason when not `True` (`Unknown` without the condition), and the age.
fn apiservice_cells(service: &APIService) -> Vec<Value> {
    let backend = service.spec.service.as_ref().map_or_else(
        || "Local".to_owned(),
        |s| {
            format!(
                "{}/{}",
                s.namespace.as_deref().unwrap_or_default(),
                s.name.as_deref().unwrap_or_default()
            )
        },
    );
    let available = service
        .status
        .conditions
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|c| c.type_ == "Available")
        .map_or_else(
            || "Unknown".to_owned(),
            |c| match c.reason.as_deref() {
                Some(reason) if c.status != "True" && !reason.is_empty() => {
                    format!("{} ({reason})", c.status)
                }
                _ => c.status.clone(),
            },
        );
    vec![
        json!(backend),
        json!(available),
        json!(service.metadata.creation_timestamp.map(|t| t.to_string())),
    ]
}
