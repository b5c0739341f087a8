//! `authorization.k8s.io/v1`.

pub mod answers;
pub mod field_selector_requirement;
pub mod localsubjectaccessreview;
pub mod selfsubjectaccessreview;
pub mod selfsubjectrulesreview;
pub mod subjectaccessreview;
mod validation;

pub use field_selector_requirement::FieldSelectorRequirement;
pub use localsubjectaccessreview::LocalSubjectAccessReview;
pub use selfsubjectaccessreview::SelfSubjectAccessReview;
pub use selfsubjectrulesreview::SelfSubjectRulesReview;
pub use subjectaccessreview::SubjectAccessReview;
