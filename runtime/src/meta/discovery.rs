//! Discovery documents: the legacy per-path ones and aggregated discovery v2.

use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

use super::{ListMeta, ObjectMeta, TypeMeta};

/// `/api`: the versions of the core group.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct APIVersions {
    /// `kind: APIVersions`.
    #[serde(flatten)]
    #[api(proto_skip)]
    pub types: TypeMeta,
    /// Served versions, e.g. `["v1"]`.
    #[api(proto = 1)]
    pub versions: Vec<String>,
    /// Where clients reach the server.
    #[serde(rename = "serverAddressByClientCIDRs")]
    #[api(proto = 2)]
    pub server_address_by_client_cidrs: Vec<ServerAddressByClientCIDR>,
}

/// A client network and the address it should use.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ServerAddressByClientCIDR {
    /// The client network, e.g. `0.0.0.0/0`.
    #[serde(rename = "clientCIDR")]
    #[api(proto = 1)]
    pub client_cidr: String,
    /// `host:port` of the server for that network.
    #[api(proto = 2)]
    pub server_address: String,
}

/// `/apis`: every named group.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct APIGroupList {
    /// `kind: APIGroupList`.
    #[serde(flatten)]
    #[api(proto_skip)]
    pub types: TypeMeta,
    /// The groups.
    #[api(proto = 1)]
    pub groups: Vec<APIGroup>,
}

/// One API group and its versions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct APIGroup {
    /// `kind: APIGroup` when served alone at `/apis/<group>`.
    #[serde(flatten)]
    #[api(proto_skip)]
    pub types: TypeMeta,
    /// Group name.
    #[api(proto = 1)]
    pub name: String,
    /// Served versions, preferred first.
    #[api(proto = 2)]
    pub versions: Vec<GroupVersionForDiscovery>,
    /// The version clients should use.
    #[api(proto = 3)]
    pub preferred_version: GroupVersionForDiscovery,
    /// Omitted by current servers.
    #[serde(
        default,
        rename = "serverAddressByClientCIDRs",
        skip_serializing_if = "Option::is_none"
    )]
    #[api(proto = 4)]
    pub server_address_by_client_cidrs: Option<Vec<ServerAddressByClientCIDR>>,
}

/// One version of a group.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct GroupVersionForDiscovery {
    /// `group/version`.
    #[api(proto = 1)]
    pub group_version: String,
    /// `version`.
    #[api(proto = 2)]
    pub version: String,
}

/// `/api/v1`, `/apis/<group>/<version>`: the resources of one group version.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct APIResourceList {
    /// `kind: APIResourceList, apiVersion: v1`.
    #[serde(flatten)]
    #[api(proto_skip)]
    pub types: TypeMeta,
    /// `group/version`.
    #[api(proto = 1)]
    pub group_version: String,
    /// The resources (and `resource/subresource` entries).
    #[api(proto = 2)]
    pub resources: Vec<APIResource>,
}

/// One resource in an [`APIResourceList`]. Its verbs travel in protobuf inside
/// a `Verbs` message, as Go's `Verbs` type marshals itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(field = "verbs", number = 4, message = "Verbs"))]
pub struct APIResource {
    /// Plural resource name, or `resource/subresource`.
    #[api(proto = 1)]
    pub name: String,
    /// Singular name.
    #[api(proto = 6)]
    pub singular_name: String,
    /// Whether objects live in namespaces.
    #[api(proto = 2)]
    pub namespaced: bool,
    /// Group, when it differs from the list's.
    #[serde(default, skip_serializing_if = "crate::go_json::omitempty")]
    #[api(proto = 8)]
    pub group: Option<String>,
    /// Version, when it differs from the list's.
    #[serde(default, skip_serializing_if = "crate::go_json::omitempty")]
    #[api(proto = 9)]
    pub version: Option<String>,
    /// Kind of the objects.
    #[api(proto = 3)]
    pub kind: String,
    /// Supported verbs.
    #[api(proto = 1, proto_in = "verbs", proto_name = "items")]
    pub verbs: Vec<String>,
    /// Short names for kubectl.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub short_names: Option<Vec<String>>,
    /// Categories such as `all`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub categories: Option<Vec<String>>,
    /// Hash of the storage version.
    #[serde(default, skip_serializing_if = "crate::go_json::omitempty")]
    #[api(proto = 10)]
    pub storage_version_hash: Option<String>,
}

/// Aggregated discovery (`apidiscovery.k8s.io/v2`): all groups in one document.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct APIGroupDiscoveryList {
    /// `kind: APIGroupDiscoveryList, apiVersion: apidiscovery.k8s.io/v2`.
    #[serde(flatten)]
    pub types: TypeMeta,
    /// Empty list metadata.
    pub metadata: ListMeta,
    /// One entry per group.
    pub items: Vec<APIGroupDiscovery>,
}

/// One group in aggregated discovery.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct APIGroupDiscovery {
    /// `metadata.name` is the group name.
    pub metadata: ObjectMeta,
    /// Versions, preferred first.
    pub versions: Vec<APIVersionDiscovery>,
}

/// One version of a group in aggregated discovery.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct APIVersionDiscovery {
    /// The version.
    pub version: String,
    /// The resources.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<APIResourceDiscovery>,
    /// `Current` or `Stale`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freshness: Option<String>,
}

/// The kind a resource answers with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct GroupVersionKind {
    /// Group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

/// One resource in aggregated discovery.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct APIResourceDiscovery {
    /// Plural resource name.
    pub resource: String,
    /// The kind the resource returns.
    #[serde(default)]
    pub response_kind: GroupVersionKind,
    /// `Namespaced` or `Cluster`.
    #[serde(default)]
    pub scope: String,
    /// Singular name.
    #[serde(default)]
    pub singular_resource: String,
    /// Supported verbs.
    #[serde(default)]
    pub verbs: Vec<String>,
    /// Short names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_names: Option<Vec<String>>,
    /// Categories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<String>>,
    /// Subresources such as `status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresources: Option<Vec<APISubresourceDiscovery>>,
}

/// One subresource in aggregated discovery.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct APISubresourceDiscovery {
    /// Subresource name, e.g. `status`.
    pub subresource: String,
    /// The kind it returns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_kind: Option<GroupVersionKind>,
    /// Supported verbs.
    pub verbs: Vec<String>,
}
