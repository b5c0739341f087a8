//! The admission webhook metrics under kube-apiserver's names and labels
//! (k8s.io/apiserver's `pkg/admission/metrics`).
//!
//! Upstream's two counters named `..._count` cannot be prometheus_client
//! counters (it names every counter `..._total`): they are kept as gauges
//! that only go up, so their samples carry upstream's names.

use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;

/// Upstream's buckets for webhook latency.
const BUCKETS: [f64; 8] = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10.0, 25.0];

fn histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

/// The webhook metrics' families.
#[derive(Clone)]
pub struct Metrics {
    duration: Family<Labels, Histogram, fn() -> Histogram>,
    requests: Family<Labels, Counter>,
    rejections: Family<Labels, Gauge>,
    fail_open: Family<Labels, Gauge>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            duration: Family::new_with_constructor(histogram),
            requests: Family::default(),
            rejections: Family::default(),
            fail_open: Family::default(),
        }
    }
}

/// Why a webhook rejected a request, as the rejection count labels it.
#[derive(Clone, Copy)]
pub enum Rejection {
    /// The webhook said no.
    NoError,
    /// It could not be called, under `failurePolicy: Fail`.
    CallingWebhook,
    /// Something went wrong in the server.
    Internal,
}

impl Metrics {
    /// Adds the families to `registry` (prometheus_client adds `_total` to
    /// counters, as upstream's names end).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "apiserver_admission_webhook_admission_duration_seconds",
            "[STABLE] Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
            self.duration.clone(),
        );
        registry.register(
            "apiserver_admission_webhook_request",
            "[ALPHA] Admission webhook request total, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
            self.requests.clone(),
        );
        registry.register(
            "apiserver_admission_webhook_rejection_count",
            "[ALPHA] Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
            self.rejections.clone(),
        );
        registry.register(
            "apiserver_admission_webhook_fail_open_count",
            "[ALPHA] Admission webhook fail open count, identified by name and broken out for each admission type (validating or admit).",
            self.fail_open.clone(),
        );
    }

    /// One call of webhook `name` (`kind`: `admit` or `validating`) for an
    /// `operation`, answered with `code` after `elapsed`.
    pub fn observe(
        &self,
        name: &str,
        kind: &'static str,
        operation: &'static str,
        elapsed: Duration,
        rejected: bool,
        code: u16,
    ) {
        let code = code.min(600);
        self.requests
            .get_or_create(&vec![
                ("name", name.to_owned()),
                ("type", kind.to_owned()),
                ("operation", operation.to_owned()),
                ("code", code.to_string()),
                ("rejected", rejected.to_string()),
            ])
            .inc();
        self.duration
            .get_or_create(&vec![
                ("name", name.to_owned()),
                ("type", kind.to_owned()),
                ("operation", operation.to_owned()),
                ("rejected", rejected.to_string()),
            ])
            .observe(elapsed.as_secs_f64());
    }

    /// A request webhook `name` rejected.
    pub fn reject(
        &self,
        name: &str,
        kind: &'static str,
        operation: &'static str,
        why: Rejection,
        code: u16,
    ) {
        let error_type = match why {
            Rejection::NoError => "no_error",
            Rejection::CallingWebhook => "calling_webhook_error",
            Rejection::Internal => "apiserver_internal_error",
        };
        self.rejections
            .get_or_create(&vec![
                ("name", name.to_owned()),
                ("type", kind.to_owned()),
                ("operation", operation.to_owned()),
                ("error_type", error_type.to_owned()),
                ("rejection_code", code.min(600).to_string()),
            ])
            .inc();
    }

    /// A failed call of webhook `name` let through (`failurePolicy: Ignore`).
    pub fn fail_open(&self, name: &str, kind: &'static str) {
        self.fail_open
            .get_or_create(&vec![("name", name.to_owned()), ("type", kind.to_owned())])
            .inc();
    }
}
