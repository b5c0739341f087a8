//! FlowSchemas: how API Priority and Fairness classifies requests into
//! priority levels and flows.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::{null_as_default, omitempty};

/// Sends the requests it matches to a priority level, split into flows by a
/// distinguisher; among matching schemas the lowest precedence wins.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "flowcontrol.apiserver.k8s.io",
    version = "v1",
    plural = "flowschemas",
    storage_prefix = "flowschemas",
    reset_status = "metadata, spec",
    cluster_scoped,
    status,
    printer_column(name = "PriorityLevel", type = "string",
        json_path = ".spec.priorityLevelConfiguration.name",
        description = "Name of the priority level the requests go to."),
    printer_column(name = "MatchingPrecedence", type = "string",
        json_path = ".spec.matchingPrecedence",
        description = "Rank among matching schemas; the lowest number wins."),
    printer_column(name = "DistinguisherMethod", type = "string",
        json_path = ".spec.distinguisherMethod",
        description = "How requests are split into flows; <none> for a single flow."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the schema was created."),
    printer_column(name = "MissingPL", type = "string", json_path = ".status.conditions",
        description = "Status of the Dangling condition: whether the priority level is missing."),
    table_cells = flowschema_cells
)]
#[api(validate = super::validation::validate_flow_schema)]
pub struct FlowSchema {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The requests matched and where they go.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: FlowSchemaSpec,
    /// Conditions of the schema, as last observed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: FlowSchemaStatus,
}

/// The desired behaviour of a flow schema.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::default_flow_schema_spec)]
pub struct FlowSchemaSpec {
    /// The priority level of matched requests.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub priority_level_configuration: PriorityLevelConfigurationReference,
    /// Rank among the schemas matching a request, 1 to 10000; the lowest wins.
    /// 1000 when unset.
    #[serde(default)]
    #[api(proto = 2)]
    pub matching_precedence: i32,
    /// How matched requests are split into flows; one flow when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub distinguisher_method: Option<FlowDistinguisherMethod>,
    /// The rules; a request matches when any rule does. No rule matches nothing.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub rules: Option<Vec<PolicyRulesWithSubjects>>,
}

/// How the requests of a schema are told apart into flows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct FlowDistinguisherMethod {
    /// `ByUser` (one flow per requesting user) or `ByNamespace` (per namespace
    /// of the object).
    #[serde(default, rename = "type")]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub type_: String,
}

/// Names the priority level a schema sends requests to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PriorityLevelConfigurationReference {
    /// Name of the PriorityLevelConfiguration.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub name: String,
}

/// Requesters and the requests of theirs that a rule matches: a request
/// matches when one subject and one resource or non-resource rule match.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRulesWithSubjects {
    /// Who sends the requests; at least one.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required, list_type = "atomic")]
    #[api(proto = 1)]
    pub subjects: Vec<Subject>,
    /// Requests for resources that match.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub resource_rules: Option<Vec<ResourcePolicyRule>>,
    /// Requests for non-resource URLs that match.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub non_resource_rules: Option<Vec<NonResourcePolicyRule>>,
}

/// A requester: a user, a group or a service account, as `kind` says.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount`: which of the other fields is set.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub kind: String,
    /// The user, for kind `User`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub user: Option<UserSubject>,
    /// The group, for kind `Group`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub group: Option<GroupSubject>,
    /// The service account, for kind `ServiceAccount`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub service_account: Option<ServiceAccountSubject>,
}

/// A user by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct UserSubject {
    /// User name; `*` is every user.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub name: String,
}

/// A group by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct GroupSubject {
    /// Group name, e.g. `system:authenticated`; `*` is every group.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub name: String,
}

/// A service account by namespace and name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccountSubject {
    /// Namespace of the service account.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub namespace: String,
    /// Name of the service account; `*` is every one in the namespace.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub name: String,
}

/// Requests for resources: a request matches when it matches every list (and,
/// for a cluster-scoped resource, `clusterScope`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ResourcePolicyRule {
    /// Verbs, e.g. `get`, `list`; `*` alone is every verb.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required, list_type = "set")]
    #[api(proto = 1)]
    pub verbs: Vec<String>,
    /// API groups; `""` is the core group, `*` alone every group.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required, list_type = "set")]
    #[api(proto = 2)]
    pub api_groups: Vec<String>,
    /// Resources, with `resource/subresource` for subresources; `*` alone is
    /// every resource.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required, list_type = "set")]
    #[api(proto = 3)]
    pub resources: Vec<String>,
    /// Whether requests outside any namespace (cluster-scoped resources and
    /// lists across namespaces) match.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub cluster_scope: Option<bool>,
    /// Namespaces of the objects; `*` alone is every namespace. Go writes
    /// `null` when unset.
    #[serde(default)]
    #[api(list_type = "set")]
    #[api(proto = 5)]
    pub namespaces: Option<Vec<String>>,
}

/// Requests for URLs outside the resource API, such as `/healthz`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NonResourcePolicyRule {
    /// Verbs, e.g. `get`; `*` alone is every verb.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required, list_type = "set")]
    #[api(proto = 1)]
    pub verbs: Vec<String>,
    /// URL paths; a trailing `/*` matches a prefix, `*` alone every path.
    #[serde(
        default,
        rename = "nonResourceURLs",
        deserialize_with = "null_as_default"
    )]
    #[api(schema_required, list_type = "set")]
    #[api(proto = 6)]
    pub non_resource_urls: Vec<String>,
}

/// The observed state of a flow schema.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct FlowSchemaStatus {
    /// Conditions such as `Dangling` (the priority level does not exist).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("type"))]
    #[api(patch_strategy = "merge", patch_merge_key = "type")]
    #[api(proto = 1)]
    pub conditions: Option<Vec<FlowSchemaCondition>>,
}

/// One condition of a flow schema.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct FlowSchemaCondition {
    /// Condition type, e.g. `Dangling`.
    #[serde(default, rename = "type", skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub type_: Option<String>,
    /// `True`, `False` or `Unknown`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub status: Option<String>,
    /// When the status last changed.
    #[serde(default)]
    #[api(proto = 3, proto_value)]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change, in CamelCase.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub reason: Option<String>,
    /// Human-readable detail of the last change.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub message: Option<String>,
}

/// The row of `kubectl get flowschemas`: precedence as a number, `<none>`
/// without a distinguisher, and the status of the `Dangling` condition (`?`
/// when there is none).
fn flowschema_cells(schema: &FlowSchema) -> Vec<Value> {
    let spec = &schema.spec;
    let distinguisher = spec
        .distinguisher_method
        .as_ref()
        .map_or("<none>", |d| d.type_.as_str());
    let missing = schema
        .status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_.as_deref() == Some("Dangling"))
        .map_or("?", |c| c.status.as_deref().unwrap_or_default());
    vec![
        json!(spec.priority_level_configuration.name),
        json!(spec.matching_precedence),
        json!(distinguisher),
        json!(schema.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(missing),
    ]
}
