//! `watch10` / `watch1000`: open W watches on the namespace's ConfigMaps from the
//! resourceVersion of a list (with bookmarks, as informers ask), then update the
//! working set at a steady pace, each update carrying the time it was sent in
//! `data.sent`; every event on every watch is timed from that send to its arrival.
//!
//! `watch-nodes`: the watches kubelets make. Pods bound round-robin to 500
//! nodes, one watch per node selecting its pods (`spec.nodeName=<node>`),
//! then the pods updated at the same pace (the time in an annotation): each
//! update is one event on one watch, and a server that hands every event to
//! every watch to filter pays for it in CPU.
//!
//! Watches share HTTP/2 connections up to `--streams-per-connection` (the
//! reference kube-apiserver announces 100 concurrent streams per connection); over
//! HTTP/1.1 each watch has its own connection.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail};
use http_body_util::BodyExt;
use hyper::Method;
use hyper::body::Incoming;
use serde_json::json;
use tokio::sync::watch;
use tokio::time::MissedTickBehavior;

use super::list::page;
use super::update::get_and_put;
use super::{Context, Report};
use crate::http::{Client, Sender, Target, status_error};
use crate::objects::{
    NODES, body, collection, configmap_name, object, pod, watched_node_name, watched_pod_name,
};
use crate::stats::{Latencies, round3};
use crate::workload::{self, Done, Operation, Until};

/// Clients sending the paced updates (so that one slow update does not hold the pace).
const UPDATERS: usize = 4;
/// How long to wait, after the last update, for the events still on their way.
const DRAIN: Duration = Duration::from_secs(15);
/// How long opening one group of watches may take.
const OPEN_TIMEOUT: Duration = Duration::from_secs(60);

/// What a watch scenario watches and updates.
struct Plan {
    /// One URL per watch.
    urls: Vec<String>,
    /// How many of the watches see each update.
    seen_by: u64,
    /// The objects updated round-robin.
    resource: &'static str,
    name: fn(u64) -> String,
    objects: u64,
    /// Stamps the send time (microseconds on the scenario's clock) into an object.
    stamp: fn(&mut serde_json::Value, String),
}

/// Runs `watch10`/`watch1000`: `watchers` watches on the working set.
pub async fn run(cx: &Context, watchers: usize) -> Result<Report> {
    let path = collection(&cx.namespace, "configmaps");
    let revision = list_revision(cx, &path).await?;
    let url = format!("{path}?watch=1&resourceVersion={revision}&allowWatchBookmarks=true");
    let plan = Plan {
        urls: vec![url; watchers],
        seen_by: watchers as u64,
        resource: "configmaps",
        name: configmap_name,
        objects: cx.working_set,
        stamp: |object, sent| object["data"]["sent"] = json!(sent),
    };
    watch(cx, plan).await
}

/// Creates one bound pod.
struct CreateBoundPod {
    path: String,
}

impl Operation for CreateBoundPod {
    async fn run(
        &self,
        client: &mut Client,
        _rng: &mut crate::random::Rng,
        index: u64,
    ) -> Result<Done> {
        let manifest = pod(&watched_pod_name(index), index, &watched_node_name(index));
        client
            .call_ok(Method::POST, &self.path, Some(body(&manifest)))
            .await?;
        Ok(Done::one("create"))
    }
}

/// Runs `watch-nodes`: a working set of pods over [`NODES`] nodes, one watch
/// of each node's pods, as kubelets watch.
pub async fn run_nodes(cx: &Context) -> Result<Report> {
    let path = collection(&cx.namespace, "pods");
    let pods = cx.working_set.max(NODES);
    let operation = Arc::new(CreateBoundPod { path: path.clone() });
    let created = workload::run(&cx.target, cx.clients, Until::Count(pods), operation).await;
    if created.errors > 0 {
        bail!(
            "creating {pods} pods: {} failed, first: {}",
            created.errors,
            created.first_error.unwrap_or_default()
        );
    }
    let revision = list_revision(cx, &path).await?;
    let urls = (0..NODES)
        .map(|node| {
            format!(
                "/api/v1/pods?watch=1&resourceVersion={revision}&allowWatchBookmarks=true\
                 &fieldSelector=spec.nodeName%3D{}",
                watched_node_name(node)
            )
        })
        .collect();
    let plan = Plan {
        urls,
        seen_by: 1,
        resource: "pods",
        name: watched_pod_name,
        objects: pods,
        stamp: |object, sent| object["metadata"]["annotations"]["kapi-bench/sent"] = json!(sent),
    };
    watch(cx, plan).await
}

/// The resourceVersion of a list of `path`.
async fn list_revision(cx: &Context, path: &str) -> Result<String> {
    let mut client = Client::new(cx.target.clone());
    let listed = page(&mut client, path, Some(1), None).await?;
    listed
        .metadata
        .resource_version
        .filter(|v| !v.is_empty())
        .ok_or_else(|| anyhow!("the list of {path} has no resourceVersion"))
}

/// Opens the plan's watches, updates its objects at the scenario's pace and
/// times every event.
async fn watch(cx: &Context, plan: Plan) -> Result<Report> {
    let watchers = plan.urls.len();
    let opening = Instant::now();
    let opened = open(cx, &plan.urls).await?;
    let open_seconds = opening.elapsed().as_secs_f64();
    let rss_watching = cx.server.as_ref().and_then(|p| p.rss_mib());

    let clock = Instant::now();
    let received = Arc::new(AtomicU64::new(0));
    let (stop, stopped) = watch::channel(false);
    let readers: Vec<_> = opened
        .into_iter()
        .map(|w| tokio::spawn(read(w, clock, received.clone(), stopped.clone())))
        .collect();

    let cpu = || cx.server.as_ref().and_then(|p| p.cpu_seconds());
    let cpu_before = cpu();
    let updates = paced_updates(cx, &plan, clock).await;
    let expected = updates.ok * plan.seen_by;
    let drain_started = Instant::now();
    while received.load(Ordering::Relaxed) < expected && drain_started.elapsed() < DRAIN {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.send_replace(true);
    // The server's CPU while it took the updates and sent their events.
    let cpu_per_update = cpu()
        .zip(cpu_before)
        .filter(|_| updates.ok > 0)
        .map(|(after, before)| (after - before) / updates.ok as f64 * 1e6);

    let mut totals = WatcherTotals::default();
    for reader in readers {
        match reader.await {
            Ok(done) => totals.add(done),
            Err(e) => totals.note_error(format!("watch reader failed: {e}")),
        }
    }
    Ok(report(
        watchers,
        open_seconds,
        rss_watching,
        (updates, cpu_per_update),
        expected,
        totals,
        cx,
    ))
}

/// The figures and the line.
fn report(
    watchers: usize,
    open_seconds: f64,
    rss_watching: Option<f64>,
    (mut updates, cpu_per_update): (UpdateTotals, Option<f64>),
    expected: u64,
    mut totals: WatcherTotals,
    cx: &Context,
) -> Report {
    let received = totals.latencies.len() as u64;
    let latency = totals.latencies.summary();
    let json = json!({
        "watchers": watchers,
        "open_seconds": round3(open_seconds),
        "rss_mib_watching": rss_watching.map(round3),
        "updates": updates.ok,
        "ops": updates.ok,
        "server_cpu_us_per_update": cpu_per_update.map(round3),
        "update_errors": updates.errors,
        "update_first_error": updates.first_error,
        "updates_per_s": round3(updates.ok as f64 / cx.duration.as_secs_f64()),
        "update_latency": updates.latencies.summary(),
        "events_expected": expected,
        "events_received": received,
        "events_missing": expected.saturating_sub(received),
        "bookmarks": totals.bookmarks,
        "watch_errors": totals.errors,
        "watches_ended_early": totals.ended_early,
        "first_error": totals.first_error,
        "latency": latency,
    });
    let line = format!(
        "event latency p50 {} ms, p99 {} ms, max {} ms ({watchers} watches opened in {:.2} s; \
         {} updates at {}/s; {received}/{expected} events; {} update errors, {} watch errors)",
        json["latency"]["p50_ms"],
        json["latency"]["p99_ms"],
        json["latency"]["max_ms"],
        open_seconds,
        updates.ok,
        cx.watch_rate,
        updates.errors,
        totals.errors + totals.ended_early,
    );
    Report { json, line }
}

/// A watch whose response head has arrived; its body streams the events.
struct OpenWatch {
    /// Keeps the connection's handle for as long as the watch is read.
    _connection: Sender,
    body: Incoming,
}

/// Opens a watch of each of `urls`, groups of them in parallel.
async fn open(cx: &Context, urls: &[String]) -> Result<Vec<OpenWatch>> {
    let group = cx.streams_per_connection.max(1);
    let mut tasks = Vec::new();
    for urls in urls.chunks(group) {
        let (target, urls) = (cx.target.clone(), urls.to_vec());
        let count = urls.len();
        tasks.push(tokio::spawn(async move {
            tokio::time::timeout(OPEN_TIMEOUT, open_group(&target, &urls))
                .await
                .map_err(|_| anyhow!("opening {count} watches took over {OPEN_TIMEOUT:?}"))?
        }));
    }
    let mut opened = Vec::with_capacity(urls.len());
    for task in tasks {
        opened.extend(task.await.context("watch opener failed")??);
    }
    Ok(opened)
}

/// Opens a watch of each of `urls`: as streams of one HTTP/2 connection, or
/// on one HTTP/1.1 connection each.
async fn open_group(target: &Target, urls: &[String]) -> Result<Vec<OpenWatch>> {
    let mut opened = Vec::with_capacity(urls.len());
    let mut shared: Option<Sender> = None;
    for url in urls {
        let mut sender = match shared.as_ref().and_then(Sender::share) {
            Some(stream) => stream,
            None => {
                let connection = target.connect().await?;
                shared = connection.share();
                connection
            }
        };
        let request = target.request(sender.protocol(), Method::GET, url, None)?;
        let response = sender.send(request).await?;
        let status = response.status();
        if !status.is_success() {
            let body = response.into_body().collect().await.map(|b| b.to_bytes());
            bail!(
                "watch {url}: {}",
                status_error(status, &body.unwrap_or_default())
            );
        }
        opened.push(OpenWatch {
            _connection: sender,
            body: response.into_body(),
        });
    }
    Ok(opened)
}

/// What one watch saw.
#[derive(Default)]
struct WatcherTotals {
    latencies: Latencies,
    bookmarks: u64,
    errors: u64,
    ended_early: u64,
    first_error: Option<String>,
}

impl WatcherTotals {
    fn add(&mut self, other: WatcherTotals) {
        self.latencies.merge(other.latencies);
        self.bookmarks += other.bookmarks;
        self.errors += other.errors;
        self.ended_early += other.ended_early;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }

    fn note_error(&mut self, error: String) {
        self.errors += 1;
        self.first_error.get_or_insert(error);
    }

    /// One newline-terminated watch event (`{"type":"MODIFIED","object":{...}}`).
    fn event(&mut self, line: &[u8], arrived: u64, received: &AtomicU64) {
        // Go and kapi write `type` first: only the head of the line is searched.
        let head = &line[..line.len().min(32)];
        if contains(head, b"\"type\":\"BOOKMARK\"") {
            self.bookmarks += 1;
        } else if contains(head, b"\"type\":\"ERROR\"") {
            let text = String::from_utf8_lossy(&line[..line.len().min(300)]).into_owned();
            self.note_error(format!("ERROR event: {text}"));
        } else if let Some(sent) = sent_micros(line) {
            self.latencies.push_micros(arrived.saturating_sub(sent));
            received.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Reads one watch's events until told to stop.
async fn read(
    mut watch: OpenWatch,
    clock: Instant,
    received: Arc<AtomicU64>,
    mut stop: watch::Receiver<bool>,
) -> WatcherTotals {
    let mut totals = WatcherTotals::default();
    let mut buffer: Vec<u8> = Vec::new();
    loop {
        let frame = tokio::select! {
            _ = stop.wait_for(|stop| *stop) => return totals,
            frame = watch.body.frame() => frame,
        };
        let data = match frame {
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
            Some(Err(e)) => {
                totals.ended_early += 1;
                totals
                    .first_error
                    .get_or_insert(format!("watch stream failed: {e}"));
                return totals;
            }
            None => {
                totals.ended_early += 1;
                totals
                    .first_error
                    .get_or_insert("the server ended a watch".to_owned());
                return totals;
            }
        };
        let arrived = micros(clock.elapsed());
        buffer.extend_from_slice(&data);
        let mut start = 0;
        while let Some(end) = buffer[start..].iter().position(|&b| b == b'\n') {
            totals.event(&buffer[start..start + end], arrived, &received);
            start += end + 1;
        }
        buffer.drain(..start);
    }
}

/// The `sent` value of an event's object (a ConfigMap's `data.sent`, a pod's
/// `kapi-bench/sent` annotation), without decoding the event.
fn sent_micros(line: &[u8]) -> Option<u64> {
    const KEY: &[u8] = b"sent\":\"";
    let at = line.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    let digits = line[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&line[at..at + digits])
        .ok()?
        .parse()
        .ok()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// What the updaters did.
#[derive(Default)]
struct UpdateTotals {
    ok: u64,
    errors: u64,
    first_error: Option<String>,
    latencies: Latencies,
}

/// Updates the plan's objects round-robin at `cx.watch_rate` per second for
/// the phase, each update stamped with its send time on `clock`.
async fn paced_updates(cx: &Context, plan: &Plan, clock: Instant) -> UpdateTotals {
    let period = Duration::from_secs_f64(UPDATERS as f64 / cx.watch_rate.max(0.001));
    let next = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + cx.duration;
    let mut tasks = Vec::new();
    for updater in 0..UPDATERS {
        let (target, next) = (cx.target.clone(), next.clone());
        let (namespace, objects) = (cx.namespace.clone(), plan.objects.max(1));
        let (resource, name, stamp) = (plan.resource, plan.name, plan.stamp);
        let offset = period.mul_f64(updater as f64 / UPDATERS as f64);
        tasks.push(tokio::spawn(async move {
            let mut client = Client::new(target);
            let mut totals = UpdateTotals::default();
            let start = tokio::time::Instant::now() + offset;
            let mut tick = tokio::time::interval_at(start, period);
            tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if Instant::now() >= deadline {
                    return totals;
                }
                let index = next.fetch_add(1, Ordering::Relaxed) % objects;
                let path = object(&namespace, resource, &name(index));
                let sent = Instant::now();
                let result = get_and_put(&mut client, &path, |object| {
                    stamp(object, micros(clock.elapsed()).to_string());
                })
                .await;
                match result {
                    Ok(_) => {
                        totals.ok += 1;
                        totals.latencies.push(sent.elapsed());
                    }
                    Err(e) => {
                        totals.errors += 1;
                        totals.first_error.get_or_insert(format!("{e:#}"));
                    }
                }
            }
        }));
    }
    let mut all = UpdateTotals::default();
    for task in tasks {
        if let Ok(done) = task.await {
            all.ok += done.ok;
            all.errors += done.errors;
            all.latencies.merge(done.latencies);
            if all.first_error.is_none() {
                all.first_error = done.first_error;
            }
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_timed_from_their_sent_value() {
        let received = AtomicU64::new(0);
        let mut totals = WatcherTotals::default();
        let modified = br#"{"type":"MODIFIED","object":{"kind":"ConfigMap","data":{"payload":"ab","sent":"1500"},"metadata":{"managedFields":[{"fieldsV1":{"f:data":{"f:sent":{}}}}]}}}"#;
        totals.event(modified, 4000, &received);
        totals.event(
            br#"{"type":"BOOKMARK","object":{"kind":"ConfigMap"}}"#,
            4000,
            &received,
        );
        totals.event(
            br#"{"type":"ERROR","object":{"kind":"Status","code":410}}"#,
            4000,
            &received,
        );
        assert_eq!(received.load(Ordering::Relaxed), 1);
        assert_eq!(totals.latencies.quantile_ms(1.0), Some(2.5));
        assert_eq!((totals.bookmarks, totals.errors), (1, 1));
    }
}
