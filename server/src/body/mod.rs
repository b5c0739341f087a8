//! The request body edge: a create, update or patch body becomes the
//! request's object here, and nowhere else. [`Input`] decodes JSON, YAML (and,
//! through `protobuf`, protobuf) into the kind's type, after the `kind` and
//! `apiVersion` it names were checked against the endpoint, and keeps what
//! `fieldValidation` reports; [`Object`] is any kind's object as the generic
//! request path handles it.

pub(crate) mod duplicates;
mod input;
mod object;
mod read;

use kapi_runtime::ResourceInfo;
use serde_json::Value;

use crate::api_error::{ApiError, ApiResult};

pub use input::Input;
pub use object::Object;
pub use read::{MAX_BODY_BYTES, answer_unread, read_body};

/// Checks the `kind`/`apiVersion` a body names against the endpoint; absent ones
/// are the endpoint's (Kubernetes decodes with the endpoint's kind as default).
pub fn check_type(info: &ResourceInfo, kind: &str, api_version: &str) -> ApiResult<()> {
    if !api_version.is_empty() && api_version != info.api_version() {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            info.api_version()
        )));
    }
    if !kind.is_empty() && kind != info.kind {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            info.kind
        )));
    }
    Ok(())
}

/// Decodes a YAML body into JSON.
pub fn decode_yaml(body: &[u8]) -> ApiResult<Value> {
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::bad_request(format!("body is not UTF-8: {e}")))?;
    // A repeated key keeps its last value, as Go's decoder; fieldValidation
    // reports the repeats (Input::from_yaml).
    let options = serde_saphyr::options! {
        duplicate_keys: serde_saphyr::options::DuplicateKeyPolicy::LastWins,
    };
    serde_saphyr::from_str_with_options::<Value>(text, options)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
}
