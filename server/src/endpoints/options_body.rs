//! The options body of a request (`DeleteOptions` of a delete or a
//! deletecollection), in JSON, YAML or protobuf.
//!
//! Every group version registers the options kinds upstream
//! (`metav1.AddToGroupVersion`), and client-go sends them under the resource's own
//! group (`apps/v1`, `batch/v1`, `policy/v1`), so the `apiVersion` of an options
//! body is not checked (kube-apiserver 1.32 takes even an unknown one); its
//! `kind`, when given, must be the options kind.

use axum::http::HeaderMap;
use kapi_runtime::meta::DeleteOptions;
use kapi_runtime::proto::{Message, envelope};
use serde_json::Value;

use crate::api_error::{ApiError, ApiResult};
use crate::negotiation::{self, Format};

/// The `DeleteOptions` of a body; the defaults when the body is empty.
pub fn delete_options(headers: &HeaderMap, body: &[u8]) -> ApiResult<DeleteOptions> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(DeleteOptions::default());
    }
    match negotiation::body_format(headers)? {
        Format::Protobuf => {
            let unknown = envelope::decode(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding protobuf body: {e}")))?;
            check_kind("DeleteOptions", unknown.api_version, unknown.kind)?;
            DeleteOptions::decode(unknown.raw)
                .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))
        }
        Format::Yaml => from_value(crate::body::decode_yaml(body)?),
        Format::Json => from_value(negotiation::decode_json(body)?),
    }
}

fn from_value(value: Value) -> ApiResult<DeleteOptions> {
    if value.is_null() {
        return Ok(DeleteOptions::default());
    }
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "invalid DeleteOptions: the body is not a JSON object",
        ));
    }
    let text = |key| value.get(key).and_then(Value::as_str).unwrap_or_default();
    check_kind("DeleteOptions", text("apiVersion"), text("kind"))?;
    serde_json::from_value(value)
        .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))
}

/// An options body names its kind or none. kube-apiserver answers another kind
/// with this text (as a 500; a client's mistake is a 400 here).
fn check_kind(expected: &str, api_version: &str, kind: &str) -> ApiResult<()> {
    if kind.is_empty() || kind == expected {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "no kind {kind:?} is registered for version {api_version:?} in scheme \
         \"pkg/apis/meta/internalversion/scheme/register.go:27\""
    )))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use axum::http::{HeaderMap, HeaderValue, header};
    use kapi_runtime::meta::DeleteOptions;
    use kapi_runtime::proto::{Message, envelope};

    use super::delete_options;

    fn headers(content_type: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_str(content_type).unwrap(),
        );
        headers
    }

    fn grace(content_type: &str, body: &[u8]) -> Result<Option<i64>, u16> {
        delete_options(&headers(content_type), body)
            .map(|o| o.grace_period_seconds)
            .map_err(|e| e.code())
    }

    #[test]
    fn any_group_version_and_no_kind_are_taken() {
        for api_version in [
            "meta.k8s.io/v1",
            "v1",
            "apps/v1",
            "batch/v1",
            "policy/v1",
            "",
        ] {
            let json = format!(
                r#"{{"kind":"DeleteOptions","apiVersion":"{api_version}","gracePeriodSeconds":3}}"#
            );
            assert_eq!(grace("application/json", json.as_bytes()), Ok(Some(3)));
            let yaml = format!(
                "kind: DeleteOptions\napiVersion: {api_version:?}\ngracePeriodSeconds: 3\n"
            );
            assert_eq!(grace("application/yaml", yaml.as_bytes()), Ok(Some(3)));
        }
        assert_eq!(
            grace("application/json", br#"{"gracePeriodSeconds":1}"#),
            Ok(Some(1))
        );
        assert_eq!(grace("application/json", b"  \n"), Ok(None));
    }

    #[test]
    fn protobuf_under_any_group_version() {
        let raw = DeleteOptions {
            grace_period_seconds: Some(0),
            ..DeleteOptions::default()
        }
        .encode_to_vec();
        let protobuf = "application/vnd.kubernetes.protobuf";
        for api_version in ["meta.k8s.io/v1", "v1", "apps/v1", "networking.k8s.io/v1"] {
            let body = envelope::encode(api_version, "DeleteOptions", &raw);
            assert_eq!(grace(protobuf, &body), Ok(Some(0)));
        }
        let pod = envelope::encode("v1", "Pod", &raw);
        assert_eq!(grace(protobuf, &pod), Err(400));
        assert_eq!(grace(protobuf, b"garbage"), Err(400));
    }

    #[test]
    fn another_kind_or_a_malformed_body_is_a_bad_request() {
        let json = "application/json";
        assert_eq!(
            grace(json, br#"{"kind":"Pod","apiVersion":"v1"}"#),
            Err(400)
        );
        assert_eq!(grace(json, b"[1]"), Err(400));
        assert_eq!(grace(json, b"{"), Err(400));
        assert_eq!(grace(json, br#"{"gracePeriodSeconds":"x"}"#), Err(400));
        assert_eq!(grace("text/plain", b"{}"), Err(415));
    }
}
