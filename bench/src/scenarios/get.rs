//! `get`: GET random ConfigMaps of the working set.

use std::sync::Arc;

use anyhow::Result;
use hyper::Method;
use serde_json::json;

use super::{Context, Report};
use crate::http::Client;
use crate::objects::{configmap_name, object};
use crate::random::Rng;
use crate::stats::round3;
use crate::workload::{self, Done, Operation, Until};

/// GETs one random ConfigMap of the working set.
pub struct GetConfigMap {
    /// The namespace.
    pub namespace: String,
    /// How many ConfigMaps there are to pick from.
    pub working_set: u64,
}

impl Operation for GetConfigMap {
    async fn run(&self, client: &mut Client, rng: &mut Rng, _index: u64) -> Result<Done> {
        let name = configmap_name(rng.below(self.working_set as usize) as u64);
        client
            .call_ok(
                Method::GET,
                &object(&self.namespace, "configmaps", &name),
                None,
            )
            .await?;
        Ok(Done::one("get"))
    }
}

/// Runs the scenario.
pub async fn run(cx: &Context) -> Result<Report> {
    let operation = Arc::new(GetConfigMap {
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
    json["gets_per_s"] = json!(round3(rate));
    json["latency"] = totals.all_latencies().summary();
    let line = format!(
        "{:.0} gets/s ({} errors; p99 {} ms)",
        rate, totals.errors, json["latency"]["p99_ms"]
    );
    Ok(Report { json, line })
}
