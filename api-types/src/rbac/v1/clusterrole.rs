//! Cluster roles: sets of permissions across the whole cluster.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{LabelSelector, ObjectMeta};
use serde::{Deserialize, Serialize};

use super::role::PolicyRule;
use crate::go_json::{null_as_default, omitempty};

/// A named set of permissions usable in every namespace (through a RoleBinding)
/// or cluster-wide (through a ClusterRoleBinding), including non-resource URLs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "rbac.authorization.k8s.io",
    version = "v1",
    plural = "clusterroles",
    storage_prefix = "clusterroles",
    cluster_scoped,
    generation = false,
    name_format = "path-segment",
    printer_column(
        name = "Created At",
        type = "date",
        json_path = ".metadata.creationTimestamp",
        description = "When the cluster role was created."
    )
)]
#[api(validate = super::validation::validate_cluster_role)]
pub struct ClusterRole {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The permissions granted; with an `aggregationRule`, the controller
    /// overwrites them with the union of the selected cluster roles' rules.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub rules: Vec<PolicyRule>,
    /// Makes this role the union of other cluster roles, chosen by label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub aggregation_rule: Option<AggregationRule>,
}

/// Which cluster roles an aggregated cluster role collects its rules from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct AggregationRule {
    /// Label selectors; a cluster role matching any of them contributes its rules.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub cluster_role_selectors: Option<Vec<LabelSelector>>,
}
