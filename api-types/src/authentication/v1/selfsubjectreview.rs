//! SelfSubjectReviews: asking the server who the caller is (`kubectl auth whoami`).

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::user_info::UserInfo;
use crate::go_json::null_as_default;

/// Created with an empty body; the server answers with the identity it
/// authenticated the request as, and stores nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "authentication.k8s.io",
    version = "v1",
    plural = "selfsubjectreviews",
    storage_prefix = "selfsubjectreviews",
    cluster_scoped,
    verbs("create"),
    answer = super::answers::answer_self_subject_review,
    generation = false
)]
pub struct SelfSubjectReview {
    /// Metadata; the server answers with only a creation time.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The answer: the caller's identity.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub status: SelfSubjectReviewStatus,
}

/// The identity of the caller.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SelfSubjectReviewStatus {
    /// User name, UID, groups and extra attributes of the caller, after
    /// impersonation if any.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 1)]
    pub user_info: UserInfo,
}
