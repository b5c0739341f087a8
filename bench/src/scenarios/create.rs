//! `create`: POST 1 KiB ConfigMaps for the phase; afterwards the first
//! `working_set` of them stay for the next scenarios and the rest are deleted
//! (untimed), so every server goes on with the same namespace.

use std::sync::Arc;

use anyhow::{Result, bail};
use hyper::{Method, StatusCode};
use serde_json::json;

use super::{Context, Report, ensure_working_set};
use crate::http::{Client, status_error};
use crate::objects::{body, collection, configmap, configmap_name, object, payload};
use crate::random::Rng;
use crate::stats::round3;
use crate::workload::{self, Done, Operation, Until};

/// POSTs ConfigMap number `index`.
pub struct CreateConfigMap {
    path: String,
    payload: String,
    /// A 409 AlreadyExists counts as done (topping up the working set).
    tolerate_existing: bool,
}

impl CreateConfigMap {
    /// Creates in `cx`'s namespace.
    pub fn new(cx: &Context, tolerate_existing: bool) -> Self {
        Self {
            path: collection(&cx.namespace, "configmaps"),
            payload: payload(&mut Rng::new()),
            tolerate_existing,
        }
    }
}

impl Operation for CreateConfigMap {
    async fn run(&self, client: &mut Client, _rng: &mut Rng, index: u64) -> Result<Done> {
        let manifest = configmap(&configmap_name(index), &self.payload, None);
        let (status, answer) = client
            .call(Method::POST, &self.path, Some(body(&manifest)))
            .await?;
        let existed = self.tolerate_existing && status == StatusCode::CONFLICT;
        if !status.is_success() && !existed {
            bail!("POST {}: {}", self.path, status_error(status, &answer));
        }
        Ok(Done::one("create"))
    }
}

/// DELETEs ConfigMap number `first + index` (gone already is fine).
struct DeleteConfigMap {
    namespace: String,
    first: u64,
}

impl Operation for DeleteConfigMap {
    async fn run(&self, client: &mut Client, _rng: &mut Rng, index: u64) -> Result<Done> {
        let path = object(
            &self.namespace,
            "configmaps",
            &configmap_name(self.first + index),
        );
        let (status, answer) = client.call(Method::DELETE, &path, None).await?;
        if !status.is_success() && status != StatusCode::NOT_FOUND {
            bail!("DELETE {path}: {}", status_error(status, &answer));
        }
        Ok(Done::one("delete"))
    }
}

/// Runs the scenario.
pub async fn run(cx: &Context) -> Result<Report> {
    let operation = Arc::new(CreateConfigMap::new(cx, false));
    let cpu_before = cx.server_cpu_seconds();
    let mut totals = workload::run(
        &cx.target,
        cx.clients,
        Until::Elapsed(cx.duration),
        operation,
    )
    .await;
    let create_cpu_ms = cx.cpu_ms_per_op(cpu_before, totals.ops);
    // Every index below this was claimed by a client; the claims that ended a
    // client's loop were never sent, so some of these were not created.
    let claimed = totals.ops + totals.errors + cx.clients as u64;
    ensure_working_set(cx).await?;
    let extra = claimed.saturating_sub(cx.working_set);
    let cleanup = Arc::new(DeleteConfigMap {
        namespace: cx.namespace.clone(),
        first: cx.working_set,
    });
    let deleted = workload::run(&cx.target, cx.clients, Until::Count(extra), cleanup).await;
    if deleted.errors > 0 {
        bail!(
            "deleting the {extra} ConfigMaps beyond the working set: {} failed, first: {}",
            deleted.errors,
            deleted.first_error.unwrap_or_default()
        );
    }
    let rate = totals.rate();
    let mut json = totals.base_json();
    json["creates_per_s"] = json!(round3(rate));
    json["server_cpu_ms_per_create"] = json!(create_cpu_ms);
    json["latency"] = totals.all_latencies().summary();
    let line = format!(
        "{:.0} creates/s ({} created, {} errors; p99 {} ms)",
        rate, totals.ops, totals.errors, json["latency"]["p99_ms"]
    );
    Ok(Report { json, line })
}
