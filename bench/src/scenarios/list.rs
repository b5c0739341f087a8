//! `list`: LIST the namespace's ConfigMaps 500 at a time, following `continue` to
//! the end, over and over: items/s.

use std::sync::Arc;

use anyhow::{Context as _, Result};
use hyper::Method;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::json;

use super::{Context, Report};
use crate::http::{Client, query_escape};
use crate::objects::collection;
use crate::random::Rng;
use crate::stats::round3;
use crate::workload::{self, Done, Operation, Until};

/// The part of a list the bench reads: how many items, and where to go on.
#[derive(Deserialize)]
pub struct ListPage {
    /// The list's metadata.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The items, counted and not decoded.
    #[serde(default)]
    pub items: Vec<IgnoredAny>,
}

/// `metadata` of a list.
#[derive(Default, Deserialize)]
pub struct ListMeta {
    /// The continue token, absent or empty on the last page.
    #[serde(rename = "continue", default)]
    pub continue_token: Option<String>,
    /// The list's resourceVersion.
    #[serde(rename = "resourceVersion", default)]
    pub resource_version: Option<String>,
}

/// GETs one page of `path` (a collection) with `limit` and an optional token.
pub async fn page(
    client: &mut Client,
    path: &str,
    limit: Option<u64>,
    token: Option<&str>,
) -> Result<ListPage> {
    let mut query = Vec::new();
    if let Some(limit) = limit {
        query.push(format!("limit={limit}"));
    }
    if let Some(token) = token {
        query.push(format!("continue={}", query_escape(token)));
    }
    let url = if query.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", query.join("&"))
    };
    let answer = client.call_ok(Method::GET, &url, None).await?;
    serde_json::from_slice(&answer).with_context(|| format!("decoding the list {url}"))
}

/// Lists the whole collection `limit` at a time; returns how many items it held.
pub async fn list_all(client: &mut Client, path: &str, limit: u64) -> Result<u64> {
    let mut items = 0;
    let mut token: Option<String> = None;
    loop {
        let page = page(client, path, Some(limit), token.as_deref()).await?;
        items += page.items.len() as u64;
        match page.metadata.continue_token {
            Some(next) if !next.is_empty() => token = Some(next),
            _ => return Ok(items),
        }
    }
}

/// One whole paged list.
struct PagedList {
    path: String,
}

impl Operation for PagedList {
    async fn run(&self, client: &mut Client, _rng: &mut Rng, _index: u64) -> Result<Done> {
        let items = list_all(client, &self.path, 500).await?;
        Ok(Done {
            kind: "list",
            items,
        })
    }
}

/// Runs the scenario.
pub async fn run(cx: &Context) -> Result<Report> {
    let operation = Arc::new(PagedList {
        path: collection(&cx.namespace, "configmaps"),
    });
    let mut totals = workload::run(
        &cx.target,
        cx.clients,
        Until::Elapsed(cx.duration),
        operation,
    )
    .await;
    let items_per_s = totals.items as f64 / totals.elapsed.as_secs_f64().max(1e-9);
    let mut json = totals.base_json();
    json["items"] = json!(totals.items);
    json["items_per_s"] = json!(round3(items_per_s));
    json["lists_per_s"] = json!(round3(totals.rate()));
    json["latency"] = totals.all_latencies().summary();
    let line = format!(
        "{:.0} items/s ({:.1} whole lists/s of ~{} items, limit=500; {} errors; p99 {} ms per list)",
        items_per_s,
        totals.rate(),
        totals.items / totals.ops.max(1),
        totals.errors,
        json["latency"]["p99_ms"]
    );
    Ok(Report { json, line })
}
