//! Health probes and lifecycle hooks of containers.

use kapi_codegen::ApiType;
use kapi_runtime::IntOrString;
use serde::{Deserialize, Serialize};

use crate::go_json::omitempty;

/// A periodic health check of a container; exactly one action is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(field = "handler", number = 1, message = "ProbeHandler"))]
pub struct Probe {
    /// Run a command in the container; exit code 0 means healthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1, proto_in = "handler")]
    pub exec: Option<ExecAction>,
    /// Send an HTTP GET; a status from 200 to 399 means healthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2, proto_in = "handler")]
    pub http_get: Option<HTTPGetAction>,
    /// Open a TCP connection; success means healthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3, proto_in = "handler")]
    pub tcp_socket: Option<TCPSocketAction>,
    /// Call the standard gRPC health service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4, proto_in = "handler")]
    pub grpc: Option<GRPCAction>,
    /// Seconds after the container started before the first check.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(minimum = 0)]
    #[api(proto = 2)]
    pub initial_delay_seconds: Option<i32>,
    /// Seconds after which one check counts as failed.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = 1, minimum = 0)]
    #[api(proto = 3)]
    pub timeout_seconds: Option<i32>,
    /// Seconds between checks.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = 10, minimum = 0)]
    #[api(proto = 4)]
    pub period_seconds: Option<i32>,
    /// Consecutive successes after a failure that count as healthy again (1 for
    /// liveness and startup probes).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = 1, minimum = 0)]
    #[api(proto = 5)]
    pub success_threshold: Option<i32>,
    /// Consecutive failures that count as unhealthy.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = 3, minimum = 0)]
    #[api(proto = 6)]
    pub failure_threshold: Option<i32>,
    /// Grace period for a container killed by this probe, over the pod's value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub termination_grace_period_seconds: Option<i64>,
}

/// Runs a command inside the container (not in a shell unless the command is one).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ExecAction {
    /// Executable and arguments.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub command: Option<Vec<String>>,
}

/// Sends an HTTP GET request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_http_get)]
pub struct HTTPGetAction {
    /// Request path.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "/")]
    #[api(proto = 1)]
    pub path: Option<String>,
    /// Port number, or the name of a container port.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub port: IntOrString,
    /// Host to connect to; the pod IP when unset (set a `Host` header instead for
    /// virtual hosts).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub host: Option<String>,
    /// `HTTP` or `HTTPS` (certificates are not verified).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "HTTP", one_of("HTTP", "HTTPS"))]
    #[api(proto = 4)]
    pub scheme: Option<String>,
    /// Extra request headers.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 5)]
    pub http_headers: Option<Vec<HTTPHeader>>,
}

/// One HTTP header.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct HTTPHeader {
    /// Header name.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Header value.
    #[serde(default)]
    #[api(proto = 2)]
    #[api(schema_required)]
    pub value: String,
}

/// Opens a TCP connection.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_tcp_socket)]
pub struct TCPSocketAction {
    /// Port number, or the name of a container port.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub port: IntOrString,
    /// Host to connect to; the pod IP when unset.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub host: Option<String>,
}

/// Calls the gRPC health checking protocol.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_grpc)]
pub struct GRPCAction {
    /// Port of the gRPC server.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub port: i32,
    /// Service name sent in the health request; empty asks about the server.
    #[serde(default)]
    #[api(default = "")]
    #[api(proto = 2)]
    pub service: Option<String>,
}

/// Actions the kubelet runs at points of a container's life.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    /// Runs right after the container is created; a failure restarts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub post_start: Option<LifecycleHandler>,
    /// Runs before the container is stopped; the grace period keeps counting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub pre_stop: Option<LifecycleHandler>,
}

/// One lifecycle action; exactly one field is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleHandler {
    /// Run a command in the container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub exec: Option<ExecAction>,
    /// Send an HTTP GET.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub http_get: Option<HTTPGetAction>,
    /// Kept for compatibility; has no effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub tcp_socket: Option<TCPSocketAction>,
    /// Wait for a while.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub sleep: Option<SleepAction>,
}

/// Waits before going on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SleepAction {
    /// Seconds to wait.
    #[serde(default)]
    #[api(required, minimum = 0)]
    #[api(proto = 1)]
    pub seconds: i64,
}
