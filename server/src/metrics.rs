//! `/metrics`: request counters in the Prometheus text format, labelled with the
//! media types that travelled, so an operator (and a test) can see which clients
//! speak protobuf and which JSON.

use std::sync::Mutex;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

/// The labels of one resource request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// HTTP method.
    pub method: String,
    /// HTTP status code.
    pub code: u16,
    /// Media type of the request body (`""` without one).
    pub request_content_type: String,
    /// Media type of the response body.
    pub response_content_type: String,
}

/// The server's metrics.
pub struct Metrics {
    registry: Mutex<Registry>,
    requests: Family<RequestLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "kapi_resource_requests",
            "Resource requests by method, code and the media types of their bodies",
            requests.clone(),
        );
        Metrics {
            registry: Mutex::new(registry),
            requests,
        }
    }
}

/// The media type of a Content-Type header, without parameters.
fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

impl Metrics {
    /// Counts one resource request.
    pub fn record(&self, method: &str, request: &HeaderMap, response: &Response) {
        let labels = RequestLabels {
            method: method.to_owned(),
            code: response.status().as_u16(),
            request_content_type: media_type(request),
            response_content_type: media_type(response.headers()),
        };
        self.requests.get_or_create(&labels).inc();
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> Response {
        let mut text = String::new();
        let encoded = match self.registry.lock() {
            Ok(registry) => prometheus_client::encoding::text::encode(&mut text, &registry),
            Err(_) => Err(std::fmt::Error),
        };
        if encoded.is_err() {
            return (StatusCode::INTERNAL_SERVER_ERROR, "metrics unavailable").into_response();
        }
        let mut response = text.into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        );
        response
    }
}
