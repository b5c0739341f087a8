//! The kinds' own answers to the authentication reviews, for a server that
//! knows no authenticator: the caller is anonymous and no token is
//! recognised, as kube-apiserver answers with anonymous authentication and no
//! token authenticator. kapi's server answers both with its authenticator
//! instead (`kapi_server::kinds::authentication`).

use kapi_runtime::meta::Time;

use super::selfsubjectreview::SelfSubjectReviewStatus;
use super::tokenreview::TokenReviewStatus;
use super::{SelfSubjectReview, TokenReview, UserInfo};

/// TokenReview: not authenticated, with the reason.
pub fn answer_token_review(review: &mut TokenReview) {
    review.status = TokenReviewStatus {
        error: Some("no token authenticator is configured on this server".to_owned()),
        ..TokenReviewStatus::default()
    };
}

/// SelfSubjectReview: the caller is anonymous.
pub fn answer_self_subject_review(review: &mut SelfSubjectReview) {
    review.metadata.creation_timestamp = Some(Time::now());
    review.status = SelfSubjectReviewStatus {
        user_info: UserInfo {
            username: Some("system:anonymous".to_owned()),
            groups: Some(vec!["system:unauthenticated".to_owned()]),
            ..UserInfo::default()
        },
    };
}
