//! `pods50k`: create many realistic pods (50,000 unless `--pods`) with high
//! concurrency, then time one LIST of all of them (no limit), one paged LIST
//! (limit=500) and the LISTs a kubelet makes of its node's pods (a field
//! selector on `spec.nodeName`, all namespaces), sampling the server's
//! resident memory before the creates, after them and at its peak during the
//! full list.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, Result};
use http_body_util::BodyExt;
use hyper::Method;
use serde_json::json;

use super::list::{ListPage, list_all};
use super::{Context, Report};
use crate::http::{Client, status_error};
use crate::objects::{NODES, body, collection, node_name, pod, pod_name};
use crate::random::Rng;
use crate::stats::{Latencies, round3};
use crate::workload::{self, Done, Operation, Until};

/// Fewest concurrent clients creating pods ("high concurrency" whatever `--clients`).
const MIN_CREATORS: usize = 64;

/// How many nodes' pods are listed, one after the other.
const NODE_LISTS: u64 = 20;

/// POSTs pod number `index`.
struct CreatePod {
    path: String,
}

impl Operation for CreatePod {
    async fn run(&self, client: &mut Client, _rng: &mut Rng, index: u64) -> Result<Done> {
        let manifest = pod(&pod_name(index), index, &node_name(index));
        client
            .call_ok(Method::POST, &self.path, Some(body(&manifest)))
            .await?;
        Ok(Done::one("create"))
    }
}

/// Runs the scenario.
pub async fn run(cx: &Context) -> Result<Report> {
    let path = collection(&cx.namespace, "pods");
    let rss = |cx: &Context| cx.server.as_ref().and_then(|p| p.rss_mib()).map(round3);
    let rss_before = rss(cx);

    let creators = cx.clients.max(MIN_CREATORS);
    let operation = Arc::new(CreatePod { path: path.clone() });
    let cpu_before = cx.server_cpu_seconds();
    let mut created = workload::run(&cx.target, creators, Until::Count(cx.pods), operation).await;
    let create_cpu_ms = cx.cpu_ms_per_op(cpu_before, created.ops);
    let rss_after_creates = rss(cx);

    if let Some(probe) = &cx.server {
        probe.reset_peak();
    }
    let mut client = Client::new(cx.target.clone());
    let full = full_list(&mut client, &path).await;
    let rss_peak_list = cx.server.as_ref().map(|p| round3(p.peak_mib()));

    let paged_started = Instant::now();
    let paged = list_all(&mut client, &path, 500).await;
    let paged_seconds = paged_started.elapsed().as_secs_f64();
    let nodes = node_lists(&mut client, cx.pods).await;
    let rss_after_lists = rss(cx);

    let mut report = Report {
        json: json!({
            "pods": cx.pods,
            "creators": creators,
            "created": created.ops,
            "create_errors": created.errors,
            "create_first_error": created.first_error,
            "create_seconds": round3(created.elapsed.as_secs_f64()),
            "creates_per_s": round3(created.rate()),
            "create_latency": created.all_latencies().summary(),
            "server_cpu_ms_per_create": create_cpu_ms,
            "rss_mib_before": rss_before,
            "rss_mib_after_creates": rss_after_creates,
            "rss_mib_peak_during_list": rss_peak_list,
            "rss_mib_after_lists": rss_after_lists,
        }),
        line: format!(
            "{} pods created at {:.0}/s ({} errors)",
            created.ops,
            created.rate(),
            created.errors
        ),
    };
    add_full_list(&mut report, full);
    add_paged_list(&mut report, paged, paged_seconds);
    add_node_lists(&mut report, nodes);
    report.line += &format!(
        "; RSS MiB before {} / after creates {} / list peak {}",
        show(rss_before),
        show(rss_after_creates),
        show(rss_peak_list)
    );
    Ok(report)
}

/// The full list's figures, or its failure.
fn add_full_list(report: &mut Report, full: Result<FullList>) {
    match full {
        Ok(list) => {
            let mib = list.bytes as f64 / (1 << 20) as f64;
            report.json["list_items"] = json!(list.items);
            report.json["list_seconds"] = json!(round3(list.seconds));
            report.json["list_mib"] = json!(round3(mib));
            report.json["list_items_per_s"] = json!(round3(list.items as f64 / list.seconds));
            report.line += &format!(
                "; full LIST {} items, {mib:.0} MiB in {:.2} s",
                list.items, list.seconds
            );
        }
        Err(e) => {
            report.json["list_error"] = json!(format!("{e:#}"));
            report.line += &format!("; full LIST FAILED: {e:#}");
        }
    }
}

/// The paged list's figures, or its failure.
fn add_paged_list(report: &mut Report, paged: Result<u64>, seconds: f64) {
    match paged {
        Ok(items) => {
            report.json["paged_items"] = json!(items);
            report.json["paged_seconds"] = json!(round3(seconds));
            report.json["paged_items_per_s"] = json!(round3(items as f64 / seconds));
            report.line += &format!("; paged LIST (limit=500) in {seconds:.2} s");
        }
        Err(e) => {
            report.json["paged_error"] = json!(format!("{e:#}"));
            report.line += &format!("; paged LIST FAILED: {e:#}");
        }
    }
}

/// The per-node lists' figures, or their failure.
fn add_node_lists(report: &mut Report, nodes: Result<NodeLists>) {
    match nodes {
        Ok(mut lists) => {
            let median = lists.latencies.quantile_ms(0.5);
            report.json["node_list_items"] = json!(lists.items);
            report.json["node_list_latency"] = lists.latencies.summary();
            report.json["node_list_ms"] = json!(median.map(round3));
            report.line += &format!(
                "; a node's pods ({} each) listed in {} ms (median of {NODE_LISTS})",
                lists.items,
                median.map_or_else(|| "-".to_owned(), |m| format!("{m:.2}"))
            );
        }
        Err(e) => {
            report.json["node_list_error"] = json!(format!("{e:#}"));
            report.line += &format!("; node LIST FAILED: {e:#}");
        }
    }
}

/// Timed LISTs of one node's pods each.
struct NodeLists {
    /// The pods of the first node listed.
    items: u64,
    latencies: Latencies,
}

/// Lists the pods of [`NODE_LISTS`] nodes as a kubelet does (all namespaces,
/// `fieldSelector=spec.nodeName=<node>`, a consistent read), checking that
/// each holds the pods bound to it.
async fn node_lists(client: &mut Client, pods: u64) -> Result<NodeLists> {
    let mut latencies = Latencies::default();
    let mut items = 0;
    for node in 0..NODE_LISTS.min(NODES) {
        let name = node_name(node);
        let path = format!("/api/v1/pods?fieldSelector=spec.nodeName%3D{name}");
        let started = Instant::now();
        let list = full_list(client, &path).await?;
        latencies.push(started.elapsed());
        let expected = pods / NODES + u64::from(node < pods % NODES);
        if list.items != expected {
            anyhow::bail!(
                "LIST {path}: {} pods, where {expected} are bound to {name}",
                list.items
            );
        }
        if node == 0 {
            items = list.items;
        }
    }
    Ok(NodeLists { items, latencies })
}

/// A timed LIST without limit.
struct FullList {
    items: u64,
    bytes: usize,
    seconds: f64,
}

/// GETs the whole collection in one response; the time is to its last byte
/// (decoding the items to count them is not timed).
async fn full_list(client: &mut Client, path: &str) -> Result<FullList> {
    let started = Instant::now();
    let response = client.send(Method::GET, path, None).await?;
    let status = response.status();
    let answer = response
        .into_body()
        .collect()
        .await
        .with_context(|| format!("reading LIST {path}"))?
        .to_bytes();
    let seconds = started.elapsed().as_secs_f64();
    if !status.is_success() {
        anyhow::bail!("LIST {path}: {}", status_error(status, &answer));
    }
    let list: ListPage =
        serde_json::from_slice(&answer).with_context(|| format!("decoding LIST {path}"))?;
    Ok(FullList {
        items: list.items.len() as u64,
        bytes: answer.len(),
        seconds,
    })
}

fn show(mib: Option<f64>) -> String {
    mib.map_or_else(|| "-".to_owned(), |m| format!("{m:.0}"))
}
