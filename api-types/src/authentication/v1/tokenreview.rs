//! TokenReviews: asking the server to authenticate a bearer token.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::user_info::UserInfo;
use crate::go_json::{null_as_default, omitempty};

/// A bearer token to authenticate; the server answers the create with the
/// user the token belongs to, and stores nothing. Webhook token authenticators
/// receive the same object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "authentication.k8s.io",
    version = "v1",
    plural = "tokenreviews",
    storage_prefix = "tokenreviews",
    cluster_scoped,
    verbs("create"),
    answer = super::answers::answer_token_review,
    generation = false
)]
pub struct TokenReview {
    /// Metadata; usually left empty, as nothing is stored.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The token and the audiences it must be valid for.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub spec: TokenReviewSpec,
    /// The answer: whether the token is valid, and whose it is.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: TokenReviewStatus,
}

/// What to authenticate.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct TokenReviewSpec {
    /// The opaque bearer token.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub token: Option<String>,
    /// Audiences the token must be meant for (at least one of them); empty
    /// means the API server's own audiences.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub audiences: Option<Vec<String>>,
}

/// The result of authenticating a token.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct TokenReviewStatus {
    /// True when the token is valid for one of the asked audiences.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub authenticated: Option<bool>,
    /// The user the token belongs to, when authenticated.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub user: UserInfo,
    /// The asked audiences the token is valid for; when the spec named none,
    /// the API server's audiences it is valid for.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub audiences: Option<Vec<String>>,
    /// Why the token could not be checked or was refused, e.g.
    /// `invalid bearer token`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub error: Option<String>,
}
