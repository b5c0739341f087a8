//! SelfSubjectRulesReviews: asking the server for what the caller may do in a
//! namespace (`kubectl auth can-i --list`).

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::go_json::{null_as_default, omitempty};

/// The actions the caller may perform in a namespace, as far as the
/// authorizers can list them; for display, not for access decisions (use a
/// SelfSubjectAccessReview for those). Answered, never stored.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "authorization.k8s.io",
    version = "v1",
    plural = "selfsubjectrulesreviews",
    storage_prefix = "selfsubjectrulesreviews",
    cluster_scoped,
    verbs("create"),
    answer = super::answers::answer_self_subject_rules_review,
    generation = false
)]
pub struct SelfSubjectRulesReview {
    /// Metadata; must be empty in a request.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The namespace to list the rules of.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub spec: SelfSubjectRulesReviewSpec,
    /// The answer: the rules that apply to the caller.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: SubjectRulesReviewStatus,
}

/// Where to list the caller's rules.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SelfSubjectRulesReviewSpec {
    /// The namespace; required in a request.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub namespace: Option<String>,
}

/// The rules of a subject in a namespace. The lists may miss rules (see
/// `incomplete`) and hold duplicates; they are not meant for access decisions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SubjectRulesReviewStatus {
    /// What the subject may do on API resources.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required)]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub resource_rules: Vec<ResourceRule>,
    /// What the subject may do on non-resource paths.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required)]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub non_resource_rules: Vec<NonResourceRule>,
    /// True when some authorizer cannot list its rules (webhooks, for
    /// instance), so that the lists may miss some.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 3)]
    pub incomplete: bool,
    /// An error met while listing the rules; the lists hold what could be
    /// listed.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub evaluation_error: Option<String>,
}

/// Actions allowed on API resources. Empty lists and `*` mean all.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRule {
    /// Verbs allowed, e.g. `get`, `list`, or `*` for all.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required)]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub verbs: Vec<String>,
    /// API groups of the resources; `""` is the core group, `*` all.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub api_groups: Option<Vec<String>>,
    /// Resources, e.g. `pods`, `pods/log`, `*` or `*/scale`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub resources: Option<Vec<String>>,
    /// Object names the rule is limited to; empty for all.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub resource_names: Option<Vec<String>>,
}

/// Actions allowed on non-resource paths.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NonResourceRule {
    /// Lower-cased HTTP verbs allowed, e.g. `get`, or `*` for all.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required)]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub verbs: Vec<String>,
    /// Paths the rule covers; a trailing `*` matches any suffix.
    #[serde(default, rename = "nonResourceURLs", skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub non_resource_urls: Option<Vec<String>>,
}
