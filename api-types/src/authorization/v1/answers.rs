//! The server's answers to the authorization reviews. kapi has no authorizer
//! yet (the security work will add RBAC): every request is allowed, and the
//! answers say so, as kube-apiserver answers with `--authorization-mode
//! AlwaysAllow` plus a reason naming why.

use super::selfsubjectrulesreview::{NonResourceRule, ResourceRule, SubjectRulesReviewStatus};
use super::subjectaccessreview::SubjectAccessReviewStatus;
use super::{
    LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview,
};

/// Why every review is allowed.
pub const NO_AUTHORIZER: &str =
    "no authorizer is configured on this server: every request is allowed";

fn allowed() -> SubjectAccessReviewStatus {
    SubjectAccessReviewStatus {
        allowed: true,
        reason: Some(NO_AUTHORIZER.to_owned()),
        ..SubjectAccessReviewStatus::default()
    }
}

/// SubjectAccessReview: allowed.
pub fn answer_subject_access_review(review: &mut SubjectAccessReview) {
    review.status = allowed();
}

/// LocalSubjectAccessReview: allowed.
pub fn answer_local_subject_access_review(review: &mut LocalSubjectAccessReview) {
    review.status = allowed();
}

/// SelfSubjectAccessReview: allowed.
pub fn answer_self_subject_access_review(review: &mut SelfSubjectAccessReview) {
    review.status = allowed();
}

/// SelfSubjectRulesReview: everything, on every resource and every path.
pub fn answer_self_subject_rules_review(review: &mut SelfSubjectRulesReview) {
    let all = || Some(vec!["*".to_owned()]);
    review.status = SubjectRulesReviewStatus {
        resource_rules: vec![ResourceRule {
            verbs: vec!["*".to_owned()],
            api_groups: all(),
            resources: all(),
            resource_names: None,
        }],
        non_resource_rules: vec![NonResourceRule {
            verbs: vec!["*".to_owned()],
            non_resource_urls: all(),
        }],
        incomplete: false,
        evaluation_error: None,
    };
}
