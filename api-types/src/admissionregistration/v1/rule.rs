//! Which requests an admission webhook or policy applies to: rules over
//! operations, groups, versions and resources, and CEL match conditions.

use kapi_codegen::ApiType;
use kapi_runtime::meta::LabelSelector;
use serde::{Deserialize, Serialize};

use crate::go_json::omitempty;

/// Operations on a set of resources (by API group, version and resource name);
/// a request matches when it matches every list. Go embeds the resource part
/// (its `Rule`), so those fields sit at this level in JSON and in a nested
/// `rule` message in protobuf.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(proto_embed(field = "rule", number = 2, message = "Rule"))]
pub struct RuleWithOperations {
    /// `CREATE`, `UPDATE`, `DELETE`, `CONNECT`, or `*` for all of them.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub operations: Option<Vec<String>>,
    /// API groups of the resources; `""` is the core group, `*` any group.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1, proto_in = "rule")]
    pub api_groups: Option<Vec<String>>,
    /// API versions of the resources; `*` is any version.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2, proto_in = "rule")]
    pub api_versions: Option<Vec<String>>,
    /// Resources, with `resource/subresource` for subresources; `*` and `*/x`
    /// are wildcards.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3, proto_in = "rule")]
    pub resources: Option<Vec<String>>,
    /// Where the resources live: `Cluster`, `Namespaced` or `*` (either; the
    /// default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4, proto_in = "rule")]
    #[api(default = "*")]
    pub scope: Option<String>,
}

/// A [`RuleWithOperations`] narrowed to objects of some names. Go embeds the
/// rule with its operations: inline in JSON, a nested `ruleWithOperations`
/// message (itself nesting `rule`) in protobuf.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct NamedRuleWithOperations {
    /// Names of the objects the rule is limited to; any name when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub resource_names: Option<Vec<String>>,
    /// The operations and resources matched. Flattened (two levels of Go
    /// embedding), so unknown keys of an entry are dropped without a report.
    #[serde(flatten)]
    #[api(proto = 2, proto_name = "ruleWithOperations")]
    pub rule_with_operations: RuleWithOperations,
}

/// The requests a validating admission policy (or its binding) looks at; a
/// request must pass every selector and rule to match.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::default_match_resources)]
#[api(map_type = "atomic")]
pub struct MatchResources {
    /// Labels of the namespace the object is in (or, for a namespace, of the
    /// object itself); every namespace when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub namespace_selector: Option<LabelSelector>,
    /// Labels of the object (old and new versions are both tried); every
    /// object when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub object_selector: Option<LabelSelector>,
    /// Operations and resources that match; at least one must.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub resource_rules: Option<Vec<NamedRuleWithOperations>>,
    /// Operations and resources left out even when `resourceRules` match.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub exclude_resource_rules: Option<Vec<NamedRuleWithOperations>>,
    /// `Exact` (only the listed versions) or `Equivalent` (also requests
    /// converted from another version of the same resource; the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    #[api(default = "Equivalent")]
    pub match_policy: Option<String>,
}

/// A CEL expression that must be true for a webhook or policy to be called.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct MatchCondition {
    /// Name of the condition, unique in its list (a qualified name).
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub name: String,
    /// CEL expression over `object`, `oldObject`, `request` and `authorizer`,
    /// evaluating to a bool.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub expression: String,
}
