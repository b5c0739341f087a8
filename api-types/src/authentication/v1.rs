//! `authentication.k8s.io/v1`.

pub mod answers;
pub mod selfsubjectreview;
pub mod tokenrequest;
pub mod tokenreview;
pub mod user_info;

pub use selfsubjectreview::SelfSubjectReview;
pub use tokenrequest::TokenRequest;
pub use tokenreview::TokenReview;
pub use user_info::UserInfo;
