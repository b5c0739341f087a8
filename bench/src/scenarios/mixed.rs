//! `mixed`: 80% gets, 10% lists (one page, limit=100), 10% updates on the working
//! set. An update here is one PUT without resourceVersion (an unconditional
//! update, which ConfigMaps allow), so that every operation is one request.

use std::sync::Arc;

use anyhow::Result;
use hyper::Method;
use serde_json::{Value, json};

use super::{Context, Report};
use crate::http::Client;
use crate::objects::{body, collection, configmap, configmap_name, object, payload};
use crate::random::Rng;
use crate::stats::round3;
use crate::workload::{self, Done, Operation, Until};

use super::list::page;

/// One request of the mix.
struct MixedRequest {
    namespace: String,
    working_set: u64,
}

impl Operation for MixedRequest {
    async fn run(&self, client: &mut Client, rng: &mut Rng, _index: u64) -> Result<Done> {
        let name = configmap_name(rng.below(self.working_set as usize) as u64);
        let path = object(&self.namespace, "configmaps", &name);
        match rng.below(10) {
            0 => {
                let list = collection(&self.namespace, "configmaps");
                let page = page(client, &list, Some(100), None).await?;
                Ok(Done {
                    kind: "list",
                    items: page.items.len() as u64,
                })
            }
            1 => {
                let manifest = configmap(&name, &payload(rng), None);
                client
                    .call_ok(Method::PUT, &path, Some(body(&manifest)))
                    .await?;
                Ok(Done::one("update"))
            }
            _ => {
                client.call_ok(Method::GET, &path, None).await?;
                Ok(Done::one("get"))
            }
        }
    }
}

/// Runs the scenario.
pub async fn run(cx: &Context) -> Result<Report> {
    let operation = Arc::new(MixedRequest {
        namespace: cx.namespace.clone(),
        working_set: cx.working_set,
    });
    let mut totals = workload::run(
        &cx.target,
        cx.clients,
        Until::Elapsed(cx.duration),
        operation,
    )
    .await;
    let rate = totals.rate();
    let mut json = totals.base_json();
    json["requests_per_s"] = json!(round3(rate));
    let mut by_kind = serde_json::Map::new();
    for (kind, latencies) in &mut totals.latencies {
        let mut summary = latencies.summary();
        summary["count"] = json!(latencies.len());
        by_kind.insert((*kind).to_owned(), summary);
    }
    json["by_kind"] = Value::Object(by_kind);
    json["latency"] = totals.all_latencies().summary();
    let line = format!(
        "{:.0} requests/s (80% get, 10% list limit=100, 10% PUT; {} errors; p50 {} ms, p99 {} ms)",
        rate, totals.errors, json["latency"]["p50_ms"], json["latency"]["p99_ms"]
    );
    Ok(Report { json, line })
}
