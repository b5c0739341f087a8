//! Content negotiation: what the client sent (Content-Type) and what it accepts
//! (Accept), including the `as=Table` and `as=PartialObjectMetadata` forms.

use axum::http::{HeaderMap, header};
use serde_json::Value;

use crate::api_error::{ApiError, ApiResult};

/// The shape of a response the client asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The object or list itself.
    Object,
    /// A meta.k8s.io/v1 Table.
    Table,
    /// meta.k8s.io/v1 PartialObjectMetadata(List).
    PartialMetadata,
}

/// The serialization of a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// application/json
    Json,
    /// application/yaml
    Yaml,
}

/// What the Accept header allows, in the client's order of preference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Output {
    /// The shape.
    pub shape: Shape,
    /// The serialization.
    pub format: Format,
}

impl Output {
    /// Plain JSON objects.
    pub const JSON: Output = Output {
        shape: Shape::Object,
        format: Format::Json,
    };

    /// Picks the first media range of `Accept` the server can produce. Protobuf is
    /// skipped (not spoken yet) so that `protobuf,json` clients get JSON.
    pub fn from_headers(headers: &HeaderMap) -> ApiResult<Output> {
        let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
            return Ok(Output::JSON);
        };
        if accept.trim().is_empty() {
            return Ok(Output::JSON);
        }
        accept
            .split(',')
            .find_map(media_range)
            .ok_or_else(ApiError::not_acceptable)
    }
}

fn media_range(range: &str) -> Option<Output> {
    let mut parts = range.split(';').map(str::trim);
    let mime = parts.next()?.to_ascii_lowercase();
    let mut as_ = None;
    let mut group = None;
    let mut version = None;
    for param in parts {
        match param.split_once('=') {
            Some(("as", v)) => as_ = Some(v),
            Some(("g", v)) => group = Some(v),
            Some(("v", v)) => version = Some(v),
            _ => {}
        }
    }
    let format = match mime.as_str() {
        "application/json" | "application/*" | "*/*" | "application/json-patch+json" => {
            Format::Json
        }
        "application/yaml" => Format::Yaml,
        _ => return None,
    };
    let shape = match (as_, group, version) {
        (None, _, _) => Shape::Object,
        (Some("Table"), Some("meta.k8s.io"), Some("v1" | "v1beta1")) => Shape::Table,
        (
            Some("PartialObjectMetadata" | "PartialObjectMetadataList"),
            Some("meta.k8s.io"),
            Some("v1" | "v1beta1"),
        ) => Shape::PartialMetadata,
        _ => return None,
    };
    Some(Output { shape, format })
}

/// Decodes a request body (JSON, or YAML as kubectl may send) into JSON.
pub fn decode_body(headers: &HeaderMap, body: &[u8]) -> ApiResult<Value> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match mime.as_str() {
        "application/json" | "" => decode_json(body),
        "application/yaml" | "application/x-yaml" | "text/yaml" => decode_yaml(body),
        "application/vnd.kubernetes.protobuf" => Err(ApiError::unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: \
             application/json, application/yaml (protobuf is not spoken yet)",
        )),
        other => Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format ({other}) - accepted media types \
             include: application/json, application/yaml"
        ))),
    }
}

/// Decodes a JSON body, with the error Kubernetes gives for malformed input.
pub fn decode_json(body: &[u8]) -> ApiResult<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding JSON: {e}")))
}

fn decode_yaml(body: &[u8]) -> ApiResult<Value> {
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::bad_request(format!("body is not UTF-8: {e}")))?;
    serde_saphyr::from_str::<Value>(text)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
}

/// Serializes a response body in the negotiated format.
pub fn encode<T: serde::Serialize>(
    value: &T,
    format: Format,
) -> ApiResult<(Vec<u8>, &'static str)> {
    match format {
        Format::Json => serde_json::to_vec(value)
            .map(|b| (b, "application/json"))
            .map_err(ApiError::internal),
        Format::Yaml => serde_saphyr::to_string(value)
            .map(|s| (s.into_bytes(), "application/yaml"))
            .map_err(ApiError::internal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn accept(v: &'static str) -> ApiResult<Output> {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_static(v));
        Output::from_headers(&h)
    }

    #[test]
    fn kubectl_get_asks_for_a_table() {
        let o = accept("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json").unwrap();
        assert_eq!(o.shape, Shape::Table);
    }

    #[test]
    fn protobuf_first_falls_back_to_json() {
        let o = accept("application/vnd.kubernetes.protobuf, application/json").unwrap();
        assert_eq!(o, Output::JSON);
        assert_eq!(
            accept("application/vnd.kubernetes.protobuf")
                .unwrap_err()
                .code(),
            406
        );
    }

    #[test]
    fn partial_metadata() {
        let o = accept("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1").unwrap();
        assert_eq!(o.shape, Shape::PartialMetadata);
    }

    #[test]
    fn bodies() {
        let h = HeaderMap::new();
        assert!(decode_body(&h, b"{\"a\":1}").is_ok());
        assert_eq!(decode_body(&h, b"{nope").unwrap_err().code(), 400);
        assert_eq!(decode_body(&h, b"").unwrap_err().code(), 400);
        let mut y = HeaderMap::new();
        y.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/yaml"),
        );
        assert_eq!(decode_body(&y, b"a: 1\n").unwrap()["a"], 1);
        let mut p = HeaderMap::new();
        p.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/vnd.kubernetes.protobuf"),
        );
        assert_eq!(decode_body(&p, b"k8s\0").unwrap_err().code(), 415);
    }
}
