//! LocalSubjectAccessReviews: a SubjectAccessReview confined to one namespace.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::subjectaccessreview::{SubjectAccessReviewSpec, SubjectAccessReviewStatus};
use crate::go_json::null_as_default;

/// Whether a user may perform an action in the namespace the review is
/// created in, which users allowed to create it there may ask without
/// cluster-wide rights. Answered, never stored.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "authorization.k8s.io",
    version = "v1",
    plural = "localsubjectaccessreviews",
    storage_prefix = "localsubjectaccessreviews",
    verbs("create"),
    answer = super::answers::answer_local_subject_access_review,
    generation = false
)]
#[api(validate = super::validation::validate_local_subject_access_review)]
pub struct LocalSubjectAccessReview {
    /// Metadata; only the namespace may be set in a request.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The user and the action to check; the resource attributes' namespace
    /// must be the review's (and non-resource attributes are refused).
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub spec: SubjectAccessReviewSpec,
    /// The answer: allowed, denied or no opinion, and why.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: SubjectAccessReviewStatus,
}
