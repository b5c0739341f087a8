//! Scheduling constraints: node and pod (anti-)affinity, tolerations and
//! topology spread.

use kapi_codegen::ApiType;
use kapi_runtime::meta::LabelSelector;
use serde::{Deserialize, Serialize};

use crate::go_json::{null_as_default, omitempty};

/// Where a pod may or should be scheduled, relative to nodes and other pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_affinity)]
pub struct Affinity {
    /// Rules about the labels of the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub node_affinity: Option<NodeAffinity>,
    /// Rules that place the pod near pods matching a selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub pod_affinity: Option<PodAffinity>,
    /// Rules that keep the pod away from pods matching a selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub pod_anti_affinity: Option<PodAntiAffinity>,
}

/// Node affinity: hard and soft rules on node labels and fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NodeAffinity {
    /// Nodes the pod may run on; checked only at scheduling time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub required_during_scheduling_ignored_during_execution: Option<NodeSelector>,
    /// Weighted preferences; the node with the highest sum wins.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub preferred_during_scheduling_ignored_during_execution: Option<Vec<PreferredSchedulingTerm>>,
}

/// A set of node selector terms, any of which may match (the terms are ORed).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct NodeSelector {
    /// The terms.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required)]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

/// Requirements a node must all meet (they are ANDed).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct NodeSelectorTerm {
    /// Requirements on node labels.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub match_expressions: Option<Vec<NodeSelectorRequirement>>,
    /// Requirements on node fields (only `metadata.name` is supported).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub match_fields: Option<Vec<NodeSelectorRequirement>>,
}

/// One requirement on a node label or field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorRequirement {
    /// The label key or field name.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub key: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt` or `Lt`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub operator: String,
    /// Values compared with; one integer for `Gt` and `Lt`, none for the
    /// existence operators.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub values: Option<Vec<String>>,
}

/// A weighted node preference.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PreferredSchedulingTerm {
    /// Weight added to a node matching `preference`, from 1 to 100.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub weight: i32,
    /// The node selector term.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub preference: NodeSelectorTerm,
}

/// Pod affinity: co-locate with pods matching selectors.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodAffinity {
    /// Terms that must all hold at scheduling time.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub required_during_scheduling_ignored_during_execution: Option<Vec<PodAffinityTerm>>,
    /// Weighted preferences.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub preferred_during_scheduling_ignored_during_execution: Option<Vec<WeightedPodAffinityTerm>>,
}

/// Pod anti-affinity: stay away from pods matching selectors.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodAntiAffinity {
    /// Terms that must all hold at scheduling time.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub required_during_scheduling_ignored_during_execution: Option<Vec<PodAffinityTerm>>,
    /// Weighted preferences.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub preferred_during_scheduling_ignored_during_execution: Option<Vec<WeightedPodAffinityTerm>>,
}

/// A set of pods, and the topology domain (node, zone, ...) that counts as "near".
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PodAffinityTerm {
    /// Labels of the pods in the set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub label_selector: Option<LabelSelector>,
    /// Namespaces searched; the pod's own namespace when this and
    /// `namespaceSelector` are empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub namespaces: Option<Vec<String>>,
    /// Node label whose value defines a domain, e.g. `topology.kubernetes.io/zone`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 3)]
    pub topology_key: String,
    /// Labels of the namespaces searched, added to `namespaces`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub namespace_selector: Option<LabelSelector>,
    /// Label keys whose values in the incoming pod are added to the selector
    /// (`key in (value)`).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 5)]
    pub match_label_keys: Option<Vec<String>>,
    /// Label keys whose values in the incoming pod are excluded by the selector
    /// (`key notin (value)`).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 6)]
    pub mismatch_label_keys: Option<Vec<String>>,
}

/// A weighted pod (anti-)affinity preference.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct WeightedPodAffinityTerm {
    /// Weight from 1 to 100.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub weight: i32,
    /// The term.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub pod_affinity_term: PodAffinityTerm,
}

/// Allows a pod onto nodes with a matching taint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_toleration)]
pub struct Toleration {
    /// Taint key matched; empty with `Exists` matches every taint.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub key: Option<String>,
    /// `Equal` (key and value match) or `Exists` (key matches).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub operator: Option<String>,
    /// Taint value matched by `Equal`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub value: Option<String>,
    /// Taint effect matched: `NoSchedule`, `PreferNoSchedule` or `NoExecute`;
    /// every effect when empty.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(one_of("NoSchedule", "PreferNoSchedule", "NoExecute"))]
    #[api(proto = 4)]
    pub effect: Option<String>,
    /// For `NoExecute`: seconds the pod stays bound after the taint appears;
    /// forever when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub toleration_seconds: Option<i64>,
}

/// Spreads matching pods evenly over topology domains.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct TopologySpreadConstraint {
    /// Largest allowed difference in matching pods between two domains.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub max_skew: i32,
    /// Node label whose value defines a domain.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub topology_key: String,
    /// What to do when no node satisfies the constraint: `DoNotSchedule` or
    /// `ScheduleAnyway`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 3)]
    pub when_unsatisfiable: String,
    /// Which pods are counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub label_selector: Option<LabelSelector>,
    /// Fewest eligible domains; below it, missing domains count as empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub min_domains: Option<i32>,
    /// Whether the pod's node affinity limits the domains counted: `Honor` or
    /// `Ignore`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("Honor", "Ignore"))]
    #[api(proto = 6)]
    pub node_affinity_policy: Option<String>,
    /// Whether node taints limit the domains counted: `Honor` or `Ignore`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("Honor", "Ignore"))]
    #[api(proto = 7)]
    pub node_taints_policy: Option<String>,
    /// Label keys whose values in the incoming pod are added to the selector.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 8)]
    pub match_label_keys: Option<Vec<String>>,
}
