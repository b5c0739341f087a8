//! How the API server reaches an admission webhook.

use kapi_codegen::ApiType;
use kapi_runtime::ByteString;
use serde::{Deserialize, Serialize};

/// Where a webhook listens: a URL or an in-cluster service, exactly one of
/// them, and the CA that signs its serving certificate.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct WebhookClientConfig {
    /// `https://host[:port]/path` of the webhook; no user info, query or
    /// fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub url: Option<String>,
    /// The in-cluster service in front of the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub service: Option<ServiceReference>,
    /// PEM CA bundle for the webhook's certificate, base64 on the wire; the
    /// system roots when empty.
    #[serde(default, skip_serializing_if = "no_bytes")]
    #[api(proto = 2)]
    pub ca_bundle: Option<ByteString>,
}

/// A service that fronts a webhook.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ServiceReference {
    /// Namespace of the service.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub namespace: String,
    /// Name of the service.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub name: String,
    /// URL path requests are sent to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub path: Option<String>,
    /// Service port, 1 to 65535; 443 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    #[api(default = 443)]
    pub port: Option<i32>,
}

/// Go's `omitempty` on a `[]byte`: JSON leaves out an empty slice, while
/// protobuf still writes a non-nil one (a pointer-like field).
fn no_bytes(bytes: &Option<ByteString>) -> bool {
    bytes.as_ref().is_none_or(|b| b.0.is_empty())
}
