//! `update`: GET a random ConfigMap of the working set, change its payload, PUT
//! it back with the resourceVersion read; a 409 Conflict starts over.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context as _, Result, bail};
use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use super::{Context, Report};
use crate::http::{Client, status_error};
use crate::objects::{body, configmap_name, object, payload};
use crate::random::Rng;
use crate::stats::round3;
use crate::workload::{self, Done, Operation, Until};

/// How many times an update is tried against concurrent writers.
const ATTEMPTS: u32 = 10;

/// GET `path`, apply `change`, PUT it back; again on 409. Returns the conflicts met.
pub async fn get_and_put(
    client: &mut Client,
    path: &str,
    mut change: impl FnMut(&mut Value),
) -> Result<u64> {
    for attempt in 0..ATTEMPTS {
        let current = client.call_ok(Method::GET, path, None).await?;
        let mut object: Value =
            serde_json::from_slice(&current).with_context(|| format!("decoding GET {path}"))?;
        change(&mut object);
        let (status, answer) = client.call(Method::PUT, path, Some(body(&object))).await?;
        if status == StatusCode::CONFLICT {
            continue;
        }
        if !status.is_success() {
            bail!("PUT {path}: {}", status_error(status, &answer));
        }
        return Ok(u64::from(attempt));
    }
    bail!("PUT {path}: still conflicting after {ATTEMPTS} attempts")
}

/// Updates one random ConfigMap of the working set.
struct UpdateConfigMap {
    namespace: String,
    working_set: u64,
    conflicts: AtomicU64,
}

impl Operation for UpdateConfigMap {
    async fn run(&self, client: &mut Client, rng: &mut Rng, _index: u64) -> Result<Done> {
        let name = configmap_name(rng.below(self.working_set as usize) as u64);
        let path = object(&self.namespace, "configmaps", &name);
        let value = payload(rng);
        let conflicts = get_and_put(client, &path, |object| {
            object["data"]["payload"] = json!(value);
        })
        .await?;
        self.conflicts.fetch_add(conflicts, Ordering::Relaxed);
        Ok(Done::one("update"))
    }
}

/// Runs the scenario.
pub async fn run(cx: &Context) -> Result<Report> {
    let operation = Arc::new(UpdateConfigMap {
        namespace: cx.namespace.clone(),
        working_set: cx.working_set,
        conflicts: AtomicU64::new(0),
    });
    let mut totals = workload::run(
        &cx.target,
        cx.clients,
        Until::Elapsed(cx.duration),
        operation.clone(),
    )
    .await;
    let rate = totals.rate();
    let mut json = totals.base_json();
    json["updates_per_s"] = json!(round3(rate));
    json["conflicts"] = json!(operation.conflicts.load(Ordering::Relaxed));
    json["latency"] = totals.all_latencies().summary();
    let line = format!(
        "{:.0} updates/s (GET+PUT; {} errors, {} conflicts retried; p99 {} ms)",
        rate, totals.errors, json["conflicts"], json["latency"]["p99_ms"]
    );
    Ok(Report { json, line })
}
