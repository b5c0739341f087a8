//! The reviews of authentication.k8s.io, answered by the authenticator
//! (upstream's `pkg/registry/authentication`): a SelfSubjectReview tells the
//! caller who it is (`kubectl auth whoami`); a TokenReview tells whose a
//! token is, for the audiences asked (the API server's by default).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::api_error::{ApiError, ApiResult};
use crate::authn::{Authenticator, TokenVerdict};
use crate::body::Input;
use crate::registry::hooks::KindRest;
use crate::registry::{Object, Registry, Scope};
use crate::user::UserInfo;

/// `selfsubjectreviews`.
pub struct SelfSubjectReviewRest;

#[async_trait]
impl KindRest for SelfSubjectReviewRest {
    async fn answer(
        &self,
        _registry: &Registry,
        scope: Scope<'_>,
        object: &mut Object,
        user: &UserInfo,
    ) -> ApiResult<()> {
        let now = jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string();
        let answer = json!({
            "metadata": {"creationTimestamp": now},
            "status": {"userInfo": user_info(user)},
        });
        answered(scope, object, answer)
    }
}

/// `tokenreviews`.
pub struct TokenReviewRest {
    /// Who knows the tokens.
    pub authenticator: Arc<Authenticator>,
}

#[async_trait]
impl KindRest for TokenReviewRest {
    async fn answer(
        &self,
        registry: &Registry,
        scope: Scope<'_>,
        object: &mut Object,
        _user: &UserInfo,
    ) -> ApiResult<()> {
        let asked = object.to_value().map_err(ApiError::internal)?;
        let token = asked
            .pointer("/spec/token")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if token.is_empty() {
            return Err(ApiError::bad_request(
                "token is required for TokenReview in authentication",
            ));
        }
        let audiences: Vec<String> = asked
            .pointer("/spec/audiences")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let verdict = self
            .authenticator
            .review_token(token, &audiences, registry.storage().as_ref(), registry)
            .await;
        let status = match verdict {
            TokenVerdict::User(user, audiences, _) => json!({
                "authenticated": true,
                "user": user_info(&user),
                "audiences": audiences,
            }),
            TokenVerdict::Refused(error) => json!({"user": {}, "error": error}),
        };
        answered(scope, object, json!({"status": status}))
    }
}

/// A user as authentication.k8s.io's UserInfo (empty fields left out).
pub(super) fn user_info(user: &UserInfo) -> Value {
    let mut info = json!({"username": user.name});
    if !user.uid.is_empty() {
        info["uid"] = json!(user.uid);
    }
    if !user.groups.is_empty() {
        info["groups"] = json!(user.groups);
    }
    if !user.extra.is_empty() {
        info["extra"] = json!(user.extra);
    }
    info
}

/// `object` with the fields of `answer` (its metadata merged) set.
pub(super) fn answered(scope: Scope<'_>, object: &mut Object, answer: Value) -> ApiResult<()> {
    let mut value = object.to_value().map_err(ApiError::internal)?;
    if let (Some(fields), Value::Object(answer)) = (value.as_object_mut(), answer) {
        for (field, part) in answer {
            match (fields.get_mut(&field), part) {
                (Some(Value::Object(kept)), Value::Object(part)) if field == "metadata" => {
                    kept.extend(part);
                }
                (_, part) => {
                    fields.insert(field, part);
                }
            }
        }
    }
    *object = Input::from_value(scope.entry, value)?.object;
    Ok(())
}
