//! The reviews of authentication.k8s.io, answered by the authenticator
//! (upstream's `pkg/registry/authentication`): a SelfSubjectReview tells the
//! caller who it is (`kubectl auth whoami`); a TokenReview tells whose a
//! token is, for the audiences asked (the API server's by default).

use std::sync::Arc;

use async_trait::async_trait;
use kapi_api_types::authentication::v1::user_info::UserInfo as ReviewedUser;
use kapi_api_types::authentication::v1::{SelfSubjectReview, TokenReview};
use kapi_api_types::certificates::v1::certificatesigningrequest::ExtraValue;
use kapi_runtime::meta::Time;

use crate::api_error::{ApiError, ApiResult};
use crate::authn::{Authenticator, TokenVerdict};
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
        _scope: Scope<'_>,
        object: &mut Object,
        user: &UserInfo,
    ) -> ApiResult<()> {
        let review = object
            .downcast_mut::<SelfSubjectReview>()
            .ok_or_else(|| not_a("SelfSubjectReview"))?;
        review.metadata.creation_timestamp = Some(Time::now());
        review.status.user_info = user_info(user);
        Ok(())
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
        _scope: Scope<'_>,
        object: &mut Object,
        _user: &UserInfo,
    ) -> ApiResult<()> {
        let review = object
            .downcast_mut::<TokenReview>()
            .ok_or_else(|| not_a("TokenReview"))?;
        let token = review.spec.token.as_deref().unwrap_or_default();
        if token.is_empty() {
            return Err(ApiError::bad_request(
                "token is required for TokenReview in authentication",
            ));
        }
        let audiences = review.spec.audiences.clone().unwrap_or_default();
        let verdict = self
            .authenticator
            .review_token(token, &audiences, registry.storage().as_ref(), registry)
            .await;
        let status = &mut review.status;
        match verdict {
            TokenVerdict::User(user, audiences, _) => {
                status.authenticated = Some(true);
                status.user = user_info(&user);
                status.audiences = Some(audiences);
            }
            TokenVerdict::Refused(error) => status.error = Some(error),
        }
        Ok(())
    }
}

fn not_a(kind: &str) -> ApiError {
    ApiError::internal(format!("the object of a review is no {kind}"))
}

/// A user as authentication.k8s.io's UserInfo (empty fields left out).
pub(super) fn user_info(user: &UserInfo) -> ReviewedUser {
    let some = |list: &Vec<String>| (!list.is_empty()).then(|| list.clone());
    ReviewedUser {
        username: Some(user.name.clone()),
        uid: (!user.uid.is_empty()).then(|| user.uid.clone()),
        groups: some(&user.groups),
        extra: (!user.extra.is_empty()).then(|| {
            let extra = user.extra.iter();
            extra
                .map(|(k, v)| (k.clone(), ExtraValue { items: v.clone() }))
                .collect()
        }),
    }
}
