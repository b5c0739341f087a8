//! `etcd-put`: what etcd itself accepts, the ceiling of any API server's creates
//! on it: puts of 1 KiB values through etcd's JSON gateway (`POST /v3/kv/put`,
//! served on the client port by etcd 3.4 and later), at the same concurrency.
//! `--server` is then etcd's client URL; the keys are deleted afterwards.

use std::sync::Arc;

use anyhow::Result;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use hyper::Method;
use serde_json::json;

use super::{Context, Report};
use crate::http::Client;
use crate::objects::payload;
use crate::random::Rng;
use crate::stats::round3;
use crate::workload::{self, Done, Operation, Until};

/// Puts key number `index` under the run's prefix.
struct Put {
    prefix: String,
    value: String,
}

impl Operation for Put {
    async fn run(&self, client: &mut Client, _rng: &mut Rng, index: u64) -> Result<Done> {
        let request = json!({
            "key": STANDARD.encode(format!("{}{index:08}", self.prefix)),
            "value": self.value,
        });
        client
            .call_ok(
                Method::POST,
                "/v3/kv/put",
                Some(Bytes::from(request.to_string())),
            )
            .await?;
        Ok(Done::one("put"))
    }
}

/// Runs the scenario.
pub async fn run(cx: &Context) -> Result<Report> {
    // The namespace name keeps runs apart; the keys sit outside /registry.
    let prefix = format!("/kapi-bench/{}/", cx.namespace);
    let operation = Arc::new(Put {
        prefix: prefix.clone(),
        value: STANDARD.encode(payload(&mut Rng::new())),
    });
    let mut totals = workload::run(
        &cx.target,
        cx.clients,
        Until::Elapsed(cx.duration),
        operation,
    )
    .await;
    // Every key after the prefix: the prefix with its last byte incremented.
    let range_end = format!("{}0", prefix.trim_end_matches('/'));
    let cleanup = json!({
        "key": STANDARD.encode(&prefix),
        "range_end": STANDARD.encode(range_end),
    });
    Client::new(cx.target.clone())
        .call_ok(
            Method::POST,
            "/v3/kv/deleterange",
            Some(Bytes::from(cleanup.to_string())),
        )
        .await?;
    let rate = totals.rate();
    let mut json = totals.base_json();
    json["puts_per_s"] = json!(round3(rate));
    json["latency"] = totals.all_latencies().summary();
    let line = format!(
        "{:.0} puts/s of 1 KiB values ({} errors; p99 {} ms)",
        rate, totals.errors, json["latency"]["p99_ms"]
    );
    Ok(Report { json, line })
}
