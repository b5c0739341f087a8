//! `/metrics`: request counters in the Prometheus text format, labelled with the
//! media types that travelled, so an operator (and a test) can see which clients
//! speak protobuf and which JSON.
//!
//! Label values come from a fixed set: a client's own header text never becomes a
//! label, or every new made-up Content-Type would add a counter for good.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The labels of one resource request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// HTTP method (`other` for extension methods).
    pub method: &'static str,
    /// HTTP status code.
    pub code: u16,
    /// Media type of the request body (`""` without one, `other` if unknown).
    pub request_content_type: &'static str,
    /// Media type of the response body.
    pub response_content_type: &'static str,
}

/// Labels of a health check: its name and endpoint (`healthz`, `livez`,
/// `readyz`), and for the totals its outcome.
type HealthLabels = Vec<(&'static str, String)>;

/// The server's metrics.
pub struct Metrics {
    registry: Registry,
    /// Priority and fairness (`apiserver_flowcontrol_*`).
    pub flow: crate::flowcontrol::metrics::FlowMetrics,
    requests: Family<RequestLabels, Counter>,
    /// The service level indicators of `/metrics/slis`: health checks.
    slis: Registry,
    health: Family<HealthLabels, Gauge>,
    health_total: Family<HealthLabels, Counter>,
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
        let flow = crate::flowcontrol::metrics::FlowMetrics::register(&mut registry);
        // kube-apiserver's names, so that dashboards made for it read these.
        let mut slis = Registry::default();
        let health = Family::<HealthLabels, Gauge>::default();
        let health_total = Family::<HealthLabels, Counter>::default();
        slis.register(
            "kubernetes_healthcheck",
            "[STABLE] This metric records the result of a single healthcheck.",
            health.clone(),
        );
        slis.register(
            "kubernetes_healthchecks",
            "[STABLE] This metric records the results of all healthcheck.",
            health_total.clone(),
        );
        Metrics {
            registry,
            flow,
            requests,
            slis,
            health,
            health_total,
        }
    }
}

/// The media types kapi reads or writes; anything else counts as `other`.
const MEDIA_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/openmetrics-text",
    "text/plain",
];

const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// The media type of a Content-Type header without parameters, from the fixed set.
fn media_type(headers: &HeaderMap) -> &'static str {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return "";
    };
    let mime = value
        .to_str()
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim();
    MEDIA_TYPES
        .iter()
        .find(|known| known.eq_ignore_ascii_case(mime))
        .copied()
        .unwrap_or("other")
}

impl Metrics {
    /// The registry, for metrics a part of the server keeps itself.
    pub fn registry_mut(&mut self) -> &mut Registry {
        &mut self.registry
    }

    /// Adds the watch caches' counters.
    pub fn register_cache(&mut self, cache: &crate::cache::ListMetrics) {
        cache.register(&mut self.registry);
    }

    /// Counts one resource request.
    pub fn record(&self, method: &str, request: &HeaderMap, response: &Response) {
        let labels = RequestLabels {
            method: METHODS
                .iter()
                .find(|m| **m == method)
                .copied()
                .unwrap_or("other"),
            code: response.status().as_u16(),
            request_content_type: media_type(request),
            response_content_type: media_type(response.headers()),
        };
        self.requests.get_or_create(&labels).inc();
    }

    /// Records one run of the health check `name` of `endpoint`.
    pub fn record_health(&self, name: &str, endpoint: &'static str, ok: bool) {
        let labels = vec![("name", name.to_owned()), ("type", endpoint.to_owned())];
        self.health.get_or_create(&labels).set(i64::from(ok));
        let status = if ok { "success" } else { "error" };
        let labels = vec![
            ("name", name.to_owned()),
            ("status", status.to_owned()),
            ("type", endpoint.to_owned()),
        ];
        self.health_total.get_or_create(&labels).inc();
    }

    /// The text exposition of every metric.
    pub fn render(&self) -> Response {
        render(&self.registry)
    }

    /// `/metrics/slis`: the health checks' results.
    pub fn render_slis(&self) -> Response {
        render(&self.slis)
    }
}

fn render(registry: &Registry) -> Response {
    let mut text = String::new();
    if prometheus_client::encoding::text::encode(&mut text, registry).is_err() {
        return (StatusCode::INTERNAL_SERVER_ERROR, "metrics unavailable").into_response();
    }
    let mut response = text.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_up_headers_do_not_become_labels() {
        let metrics = Metrics::default();
        let response = StatusCode::OK.into_response();
        for i in 0..100 {
            let mut headers = HeaderMap::new();
            let made_up = format!("application/x-{i}");
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_str(&made_up).unwrap(),
            );
            metrics.record(&format!("M{i}"), &headers, &response);
        }
        let labels = RequestLabels {
            method: "other",
            code: 200,
            request_content_type: "other",
            response_content_type: "",
        };
        assert_eq!(metrics.requests.get_or_create(&labels).get(), 100);
    }
}
