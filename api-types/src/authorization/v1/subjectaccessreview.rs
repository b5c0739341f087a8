//! SubjectAccessReviews: asking the server whether a given user may perform
//! an action, and the attributes of such a question.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{LabelSelectorRequirement, ObjectMeta};
use serde::{Deserialize, Serialize};

use super::field_selector_requirement::FieldSelectorRequirement;
use crate::certificates::v1::certificatesigningrequest::ExtraValue;
use crate::go_json::{null_as_default, omitempty};

/// Whether a user, with the given groups and extra attributes, may perform an
/// action; the server answers the create with its authorizers' decision and
/// stores nothing. Webhook authorizers receive the same object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "authorization.k8s.io",
    version = "v1",
    plural = "subjectaccessreviews",
    storage_prefix = "subjectaccessreviews",
    cluster_scoped,
    verbs("create"),
    answer = super::answers::answer_subject_access_review,
    generation = false
)]
#[api(validate = super::validation::validate_subject_access_review)]
pub struct SubjectAccessReview {
    /// Metadata; must be empty in a request.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The user and the action to check.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub spec: SubjectAccessReviewSpec,
    /// The answer: allowed, denied or no opinion, and why.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: SubjectAccessReviewStatus,
}

/// The subject and the action of an access review; exactly one of
/// `resourceAttributes` and `nonResourceAttributes` is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SubjectAccessReviewSpec {
    /// The action on an API resource to check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub resource_attributes: Option<ResourceAttributes>,
    /// The request to a non-resource path (e.g. `/healthz`) to check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub non_resource_attributes: Option<NonResourceAttributes>,
    /// The user to check; `user` or `groups` (or both) must be set.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub user: Option<String>,
    /// The groups of the user to check.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub groups: Option<Vec<String>>,
    /// Extra attributes of the user, as an authenticator would have set them,
    /// by key.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub extra: Option<BTreeMap<String, ExtraValue>>,
    /// UID of the user.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub uid: Option<String>,
}

/// An action on API resources, as the authorizers see a request: the fields
/// are those of the request's URL and verb. Empty fields mean "any".
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ResourceAttributes {
    /// Namespace of the action; empty for cluster-scoped resources, or for
    /// every namespace of a namespaced one.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub namespace: Option<String>,
    /// The API verb, e.g. `get`, `list`, `create`, `watch`, or `*`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub verb: Option<String>,
    /// API group of the resource; empty for the core group, `*` for all.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub group: Option<String>,
    /// API version of the resource; `*` for all.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub version: Option<String>,
    /// The resource's plural name, e.g. `pods`; `*` for all.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub resource: Option<String>,
    /// A subresource, e.g. `status` or `log`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub subresource: Option<String>,
    /// Name of the object acted on; empty for all (and for `list` and `create`).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 7)]
    pub name: Option<String>,
    /// The field selector of a `list`, `watch` or `deletecollection`, for
    /// authorizers that limit access by field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub field_selector: Option<FieldSelectorAttributes>,
    /// The label selector of a `list`, `watch` or `deletecollection`, for
    /// authorizers that limit access by label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    pub label_selector: Option<LabelSelectorAttributes>,
}

/// A label selector as an access check sees it: its text, or its parsed
/// requirements (not both).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorAttributes {
    /// The selector as written in a request's `labelSelector` parameter,
    /// e.g. `app=web,tier!=cache`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub raw_selector: Option<String>,
    /// The selector as requirements, all of which must hold.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub requirements: Option<Vec<LabelSelectorRequirement>>,
}

/// A field selector as an access check sees it: its text, or its parsed
/// requirements (not both).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct FieldSelectorAttributes {
    /// The selector as written in a request's `fieldSelector` parameter,
    /// e.g. `metadata.name=web`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub raw_selector: Option<String>,
    /// The selector as requirements, all of which must hold.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub requirements: Option<Vec<FieldSelectorRequirement>>,
}

/// A request to a path outside the API resources, as the authorizers see it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct NonResourceAttributes {
    /// The URL path, e.g. `/healthz` or `/metrics`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub path: Option<String>,
    /// The lower-cased HTTP verb, e.g. `get`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub verb: Option<String>,
}

/// The authorizers' decision. `allowed` false with `denied` false means no
/// authorizer had an opinion.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct SubjectAccessReviewStatus {
    /// True when the action is allowed.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub allowed: bool,
    /// True when an authorizer explicitly denied the action (so no later one
    /// was asked); never true together with `allowed`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub denied: Option<bool>,
    /// Why the action is allowed or denied, for people, e.g. the RBAC binding
    /// that allowed it.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub reason: Option<String>,
    /// An error met while deciding, e.g. a selector that could not be parsed;
    /// the decision may still stand.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub evaluation_error: Option<String>,
}
