//! Environment variables of containers and where their values come from.

use kapi_codegen::ApiType;
use kapi_runtime::Quantity;
use serde::{Deserialize, Serialize};

use crate::go_json::omitempty;

/// One environment variable of a container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_env_var)]
pub struct EnvVar {
    /// Variable name.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub name: String,
    /// Literal value; `$(OTHER)` refers to variables defined before this one.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub value: Option<String>,
    /// Where to read the value from, instead of `value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub value_from: Option<Box<EnvVarSource>>,
}

/// The source of an environment variable's value; exactly one field is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct EnvVarSource {
    /// A field of the pod, e.g. `metadata.name` or `status.podIP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub field_ref: Option<ObjectFieldSelector>,
    /// A resource limit or request of a container, e.g. `limits.memory`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub resource_field_ref: Option<ResourceFieldSelector>,
    /// One key of a ConfigMap in the pod's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub config_map_key_ref: Option<ConfigMapKeySelector>,
    /// One key of a Secret in the pod's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub secret_key_ref: Option<SecretKeySelector>,
}

/// Selects a field of the pod (downward API).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct ObjectFieldSelector {
    /// Version of the schema `fieldPath` is written in.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(default = "v1")]
    #[api(proto = 1)]
    pub api_version: Option<String>,
    /// Path of the field, e.g. `metadata.labels['app']` or `spec.nodeName`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub field_path: String,
}

/// Selects a resource limit or request of a container (downward API).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct ResourceFieldSelector {
    /// Container whose resources are read; required in volumes, the consuming
    /// container for environment variables.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub container_name: Option<String>,
    /// The resource, e.g. `limits.cpu` or `requests.memory`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub resource: String,
    /// Unit the value is divided by, e.g. `1Mi`; `1` when zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub divisor: Option<Quantity>,
}

/// Selects one key of a ConfigMap.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(
    field = "localObjectReference",
    number = 1,
    message = "LocalObjectReference"
))]
#[api(validate = super::validation::validate_config_map_key)]
#[api(map_type = "atomic")]
pub struct ConfigMapKeySelector {
    /// Name of the ConfigMap.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1, proto_in = "localObjectReference")]
    pub name: Option<String>,
    /// Key to read.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub key: String,
    /// Start the container even if the ConfigMap or key is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub optional: Option<bool>,
}

/// Selects one key of a Secret.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(
    field = "localObjectReference",
    number = 1,
    message = "LocalObjectReference"
))]
#[api(validate = super::validation::validate_secret_key)]
#[api(map_type = "atomic")]
pub struct SecretKeySelector {
    /// Name of the Secret.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1, proto_in = "localObjectReference")]
    pub name: Option<String>,
    /// Key to read.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub key: String,
    /// Start the container even if the Secret or key is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub optional: Option<bool>,
}

/// A whole ConfigMap or Secret whose keys become environment variables.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct EnvFromSource {
    /// Text put in front of every key to form the variable name.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub prefix: Option<String>,
    /// The ConfigMap to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub config_map_ref: Option<ConfigMapEnvSource>,
    /// The Secret to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub secret_ref: Option<SecretEnvSource>,
}

/// A ConfigMap used as a whole as environment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(
    field = "localObjectReference",
    number = 1,
    message = "LocalObjectReference"
))]
pub struct ConfigMapEnvSource {
    /// Name of the ConfigMap.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1, proto_in = "localObjectReference")]
    pub name: Option<String>,
    /// Start the container even if the ConfigMap is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub optional: Option<bool>,
}

/// A Secret used as a whole as environment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(
    field = "localObjectReference",
    number = 1,
    message = "LocalObjectReference"
))]
pub struct SecretEnvSource {
    /// Name of the Secret.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1, proto_in = "localObjectReference")]
    pub name: Option<String>,
    /// Start the container even if the Secret is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub optional: Option<bool>,
}
