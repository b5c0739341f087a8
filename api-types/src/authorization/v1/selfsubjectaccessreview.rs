//! SelfSubjectAccessReviews: asking the server whether the caller may perform
//! an action (`kubectl auth can-i`).

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::subjectaccessreview::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReviewStatus,
};
use crate::go_json::null_as_default;

/// Whether the caller itself may perform an action; every authenticated
/// user may ask. Answered, never stored.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "authorization.k8s.io",
    version = "v1",
    plural = "selfsubjectaccessreviews",
    storage_prefix = "selfsubjectaccessreviews",
    cluster_scoped,
    verbs("create"),
    answer = super::answers::answer_self_subject_access_review,
    generation = false
)]
#[api(validate = super::validation::validate_self_subject_access_review)]
pub struct SelfSubjectAccessReview {
    /// Metadata; must be empty in a request.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The action to check.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub spec: SelfSubjectAccessReviewSpec,
    /// The answer: allowed, denied or no opinion, and why.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: SubjectAccessReviewStatus,
}

/// The action the caller asks about; exactly one of the two is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SelfSubjectAccessReviewSpec {
    /// The action on an API resource to check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub resource_attributes: Option<ResourceAttributes>,
    /// The request to a non-resource path to check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub non_resource_attributes: Option<NonResourceAttributes>,
}
