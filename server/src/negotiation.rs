//! Content negotiation: what the client sent (Content-Type) and what it accepts
//! (Accept), including the `as=Table` and `as=PartialObjectMetadata` forms.

use axum::http::{HeaderMap, header};
use serde_json::Value;

use kapi_runtime::proto::envelope;

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
    /// application/vnd.kubernetes.protobuf (kinds with a protobuf message, and the
    /// meta types)
    Protobuf,
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

    /// Picks the most preferred media range of `Accept` (q-values first, then
    /// order) the server can produce. Protobuf is produced only for kinds that
    /// have a message (`protobuf`), and never for a Table (upstream has no
    /// protobuf Table): such ranges are skipped, so `protobuf,json` clients of a
    /// JSON-only kind get JSON, and a request offering nothing else gets 406.
    pub fn from_headers(headers: &HeaderMap, protobuf: bool) -> ApiResult<Output> {
        Output::for_kind(headers, protobuf, true)
    }

    /// [`Output::from_headers`] for a kind that may have no Table form
    /// (`table`: the kinds that are only created and answered, the reviews,
    /// have no table convertor upstream): a Table range is then skipped like an
    /// unproducible protobuf one, so the next acceptable range wins.
    pub fn for_kind(headers: &HeaderMap, protobuf: bool, table: bool) -> ApiResult<Output> {
        let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
            return Ok(Output::JSON);
        };
        if accept.trim().is_empty() {
            return Ok(Output::JSON);
        }
        let mut ranges: Vec<(f32, &str)> = accept
            .split(',')
            .map(|range| (quality(range), range))
            .filter(|(q, _)| *q > 0.0)
            .collect();
        // Stable: equal q-values keep the client's order.
        ranges.sort_by(|a, b| b.0.total_cmp(&a.0));
        ranges
            .into_iter()
            .find_map(|(_, range)| {
                media_range(range, protobuf).filter(|o| table || o.shape != Shape::Table)
            })
            .ok_or_else(ApiError::not_acceptable)
    }
}

/// The `q` parameter of a media range (1 when absent or malformed).
fn quality(range: &str) -> f32 {
    range
        .split(';')
        .skip(1)
        .filter_map(|p| p.trim().strip_prefix("q="))
        .find_map(|q| q.trim().parse::<f32>().ok())
        .map_or(1.0, |q| q.clamp(0.0, 1.0))
}

fn media_range(range: &str, protobuf: bool) -> Option<Output> {
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
    let format = match mime.as_str() {
        "application/json" | "application/*" | "*/*" | "application/json-patch+json" => {
            Format::Json
        }
        "application/yaml" => Format::Yaml,
        "application/vnd.kubernetes.protobuf" => match shape {
            Shape::Table => return None,
            Shape::PartialMetadata => Format::Protobuf,
            Shape::Object if protobuf => Format::Protobuf,
            Shape::Object => return None,
        },
        _ => return None,
    };
    Some(Output { shape, format })
}

/// Whether the client prefers protobuf: errors are then sent as protobuf
/// `Status` messages, as kube-apiserver encodes them with the negotiated codec.
pub fn prefers_protobuf(headers: &HeaderMap) -> bool {
    Output::from_headers(headers, true).is_ok_and(|o| o.format == Format::Protobuf)
}

/// The format of a request body, from its `Content-Type` (JSON when absent);
/// 415 for anything else.
pub fn body_format(headers: &HeaderMap) -> ApiResult<Format> {
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
        "application/json" | "" => Ok(Format::Json),
        "application/yaml" | "application/x-yaml" | "text/yaml" => Ok(Format::Yaml),
        envelope::MEDIA_TYPE => Ok(Format::Protobuf),
        other => Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format ({other}) - accepted media types \
             include: application/json, application/yaml"
        ))),
    }
}

/// A JSON response body: compact, ending with a newline (Go's `json.Encoder`).
pub fn json_body<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = serde_json::to_vec(value)?;
    out.push(b'\n');
    Ok(out)
}

/// Decodes a JSON body, with the error Kubernetes gives for malformed input.
pub fn decode_json(body: &[u8]) -> ApiResult<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding JSON: {e}")))
}

/// Decodes a patch body, with the words Kubernetes uses for a malformed one.
pub fn decode_patch(body: &[u8]) -> ApiResult<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))
}

/// Serializes a response body in the negotiated format. A JSON body ends
/// with a newline, as Go's `json.Encoder` ends what kube-apiserver writes
/// (clients compare error texts, and `kubectl get --raw` output, exactly).
pub fn encode<T: serde::Serialize>(
    value: &T,
    format: Format,
) -> ApiResult<(Vec<u8>, &'static str)> {
    match format {
        Format::Json => json_body(value)
            .map(|b| (b, "application/json"))
            .map_err(ApiError::internal),
        Format::Yaml => serde_saphyr::to_string(value)
            .map(|s| (s.into_bytes(), "application/yaml"))
            .map_err(ApiError::internal),
        // Protobuf needs the typed message: callers encode it through
        // crate::protobuf, never through here.
        Format::Protobuf => Err(ApiError::internal(
            "a protobuf response was serialized through serde",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn accept(v: &'static str) -> ApiResult<Output> {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_static(v));
        Output::from_headers(&h, false)
    }

    fn accept_proto(v: &'static str) -> ApiResult<Output> {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_static(v));
        Output::from_headers(&h, true)
    }

    #[test]
    fn a_kind_without_tables_skips_table_ranges() {
        let mut h = HeaderMap::new();
        let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
        h.insert(header::ACCEPT, HeaderValue::from_static(table));
        assert_eq!(Output::for_kind(&h, true, false).unwrap_err().code(), 406);
        assert_eq!(
            Output::for_kind(&h, true, true).unwrap().shape,
            Shape::Table
        );
        let both = "application/json;as=Table;v=v1;g=meta.k8s.io, application/json";
        h.insert(header::ACCEPT, HeaderValue::from_static(both));
        assert_eq!(Output::for_kind(&h, true, false).unwrap(), Output::JSON);
    }

    #[test]
    fn go_clients_get_protobuf_for_kinds_with_a_message() {
        let o = accept_proto("application/vnd.kubernetes.protobuf,application/json").unwrap();
        assert_eq!(o.format, Format::Protobuf);
        let o = accept_proto(
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
        )
        .unwrap();
        assert_eq!(
            (o.shape, o.format),
            (Shape::PartialMetadata, Format::Protobuf)
        );
    }

    #[test]
    fn q_values_rank_before_order() {
        let o =
            accept_proto("application/vnd.kubernetes.protobuf;q=0.5, application/json").unwrap();
        assert_eq!(o.format, Format::Json);
        let o =
            accept_proto("application/json;q=0.1, application/vnd.kubernetes.protobuf").unwrap();
        assert_eq!(o.format, Format::Protobuf);
        assert_eq!(
            accept_proto("application/json;q=0").unwrap_err().code(),
            406
        );
    }

    #[test]
    fn a_protobuf_table_is_not_acceptable() {
        let err = accept_proto("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io")
            .unwrap_err();
        assert_eq!(err.code(), 406);
        let o = accept_proto(
            "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io",
        )
        .unwrap();
        assert_eq!((o.shape, o.format), (Shape::Table, Format::Json));
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
        let with = |content_type: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            body_format(&h).map_err(|e| e.code())
        };
        assert_eq!(body_format(&HeaderMap::new()).ok(), Some(Format::Json));
        assert_eq!(with("application/json; charset=utf-8"), Ok(Format::Json));
        assert_eq!(with("application/yaml"), Ok(Format::Yaml));
        assert_eq!(
            with("application/vnd.kubernetes.protobuf"),
            Ok(Format::Protobuf)
        );
        assert_eq!(with("text/plain"), Err(415));
        assert_eq!(decode_json(b"{nope").unwrap_err().code(), 400);
        assert_eq!(decode_json(b"").unwrap_err().code(), 400);
        assert_eq!(crate::body::decode_yaml(b"a: 1\n").unwrap()["a"], 1);
    }
}
