//! Roles: sets of permissions inside one namespace.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::go_json::{null_as_default, omitempty};

/// A named set of permissions on the objects of one namespace; a RoleBinding
/// grants it to users, groups or service accounts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "rbac.authorization.k8s.io",
    version = "v1",
    plural = "roles",
    storage_prefix = "roles",
    generation = false,
    name_format = "path-segment",
    printer_column(
        name = "Created At",
        type = "date",
        json_path = ".metadata.creationTimestamp",
        description = "When the role was created."
    )
)]
#[api(validate = super::validation::validate_role)]
pub struct Role {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The permissions, each allowing some verbs on some resources; their union
    /// is what the role grants.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub rules: Vec<PolicyRule>,
}

/// One permission: verbs allowed on resources of API groups (optionally only
/// the named objects), or on non-resource URL paths.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRule {
    /// Allowed verbs such as `get`, `list`, `create`; `*` allows every verb.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required, list_type = "atomic")]
    #[api(proto = 1)]
    pub verbs: Vec<String>,
    /// API groups of the resources; `""` is the core group, `*` every group.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub api_groups: Option<Vec<String>>,
    /// Resources the rule applies to, as plural names or `resource/subresource`;
    /// `*` matches every resource.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub resources: Option<Vec<String>>,
    /// Object names the rule is limited to; every object when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub resource_names: Option<Vec<String>>,
    /// URL paths outside the resource API (e.g. `/healthz`, `/logs/*`); only in
    /// cluster roles, and then without `resources`.
    #[serde(default, rename = "nonResourceURLs", skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 5)]
    pub non_resource_urls: Option<Vec<String>>,
}
