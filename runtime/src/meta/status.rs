use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

use crate::go_json::omitempty;

use super::ListMeta;

/// meta.k8s.io/v1 Status: the body of every error (and of some successes).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// Always `Status`.
    #[api(proto_skip)]
    pub kind: String,
    /// Always `v1`.
    #[api(proto_skip)]
    pub api_version: String,
    /// Empty list metadata, as upstream sends it.
    #[api(proto = 1)]
    pub metadata: ListMeta,
    /// `Success` or `Failure`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub status: Option<String>,
    /// Human-readable description; kubectl prints it.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub message: Option<String>,
    /// Machine-readable reason, e.g. `NotFound`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub reason: Option<String>,
    /// Extended data about the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    // A list type on a struct: upstream's own `+listType=atomic` marker on
    // Status.Details, kept so the merge schema matches its OpenAPI.
    #[api(list_type = "atomic")]
    #[api(proto = 5)]
    pub details: Option<StatusDetails>,
    /// The HTTP status code.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub code: Option<i32>,
}

/// Extra data of a [`Status`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    /// Name of the object concerned.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub name: Option<String>,
    /// API group of the object concerned.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub group: Option<String>,
    /// Kind (or resource) of the object concerned.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub kind: Option<String>,
    /// UID of the object concerned.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub uid: Option<String>,
    /// Field-level causes (validation errors).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub causes: Option<Vec<StatusCause>>,
    /// Seconds after which the client may retry.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub retry_after_seconds: Option<i32>,
}

/// One cause of a failure, usually one invalid field.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct StatusCause {
    /// Machine-readable cause, e.g. `FieldValueInvalid`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub reason: Option<String>,
    /// Human-readable description of the cause.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub message: Option<String>,
    /// Path of the field, e.g. `spec.containers[0].image`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub field: Option<String>,
}

impl Status {
    /// A `Failure` status with reason, message and HTTP code.
    pub fn failure(code: i32, reason: &str, message: impl Into<String>) -> Status {
        Status {
            kind: "Status".into(),
            api_version: "v1".into(),
            metadata: ListMeta::default(),
            status: Some("Failure".into()),
            message: Some(message.into()),
            reason: (!reason.is_empty()).then(|| reason.to_owned()),
            details: None,
            code: Some(code),
        }
    }

    /// A `Success` status (e.g. the answer to a delete).
    pub fn success(details: Option<StatusDetails>) -> Status {
        Status {
            kind: "Status".into(),
            api_version: "v1".into(),
            metadata: ListMeta::default(),
            status: Some("Success".into()),
            message: None,
            reason: None,
            details,
            code: None,
        }
    }
}
