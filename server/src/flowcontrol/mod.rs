//! API priority and fairness (k8s.io/apiserver's flowcontrol, as
//! kube-apiserver 1.32 runs it), or the plain in-flight limits when it is off.
//!
//! - Each request is matched against the FlowSchemas in order
//!   ([`classify`]); the first match names its priority level and its flow
//!   (the user, the namespace, or one for all).
//! - The level's queue set ([`queueset`]) gives it seats at once (exempt),
//!   refuses it when full (`Reject`), or queues it fairly among flows.
//! - A refused request gets kube-apiserver's 429 (`Retry-After`, plain text);
//!   every classified answer names its FlowSchema and PriorityLevel by uid in
//!   `X-Kubernetes-PF-*` headers.
//! - The configuration comes from the objects ([`controller`] keeps the
//!   bootstrap ones and writes their `Dangling` conditions); the seats are
//!   shared by `--max-requests-inflight` + `--max-mutating-requests-inflight`.

pub mod bootstrap;
pub mod borrowing;
pub mod classify;
pub mod config;
pub mod controller;
pub mod debug;
pub mod max_in_flight;
pub mod metrics;
pub mod queueset;
pub mod watches;
pub mod width;

use std::collections::{BTreeMap, HashMap};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

use crate::request_info::{RequestInfo, ResourceRef, Verb};
use crate::watch_signal;
use classify::{Descriptor, Requested};
use config::{Config, Level, Schema};
use metrics::FlowMetrics;
use queueset::{Permit, QueueSet, Refusal};

/// How long a watch may hold its seats while it sends its initial events.
const WATCH_START_LIMIT: Duration = Duration::from_secs(60);

/// `X-Kubernetes-PF-FlowSchema-UID`.
pub const FLOW_SCHEMA_UID: HeaderName = HeaderName::from_static("x-kubernetes-pf-flowschema-uid");
/// `X-Kubernetes-PF-PriorityLevel-UID`.
pub const PRIORITY_LEVEL_UID: HeaderName =
    HeaderName::from_static("x-kubernetes-pf-prioritylevel-uid");

/// The body of a 429, as upstream writes it (plain text, not a Status).
pub const TOO_MANY: &str = "Too many requests, please try again later.\n";

/// Longest a request waits in a queue.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// How requests are limited.
#[derive(Clone, Default)]
pub enum Limiter {
    /// Not at all (tests that build an app by hand).
    #[default]
    None,
    /// `--enable-priority-and-fairness=false`: the in-flight limits.
    MaxInFlight(max_in_flight::MaxInFlight),
    /// API priority and fairness.
    Priority(Arc<FlowControl>),
}

/// How many objects of a resource (group, plural) the server holds, when it
/// knows: what a list's seats are estimated from.
pub type ObjectCount<'a> = &'a (dyn Fn(&str, &str) -> Option<usize> + Sync);

impl Limiter {
    /// Serves `request` within the limits (the filter after authentication
    /// and impersonation).
    pub async fn serve(&self, request: Request, next: Next, count: ObjectCount<'_>) -> Response {
        match self {
            Limiter::None => next.run(request).await,
            Limiter::MaxInFlight(limits) => limits.serve(request, next).await,
            Limiter::Priority(flow_control) => flow_control.serve(request, next, count).await,
        }
    }
}

/// The state of priority and fairness.
pub struct FlowControl {
    /// Seats to share among the levels.
    server_limit: u32,
    config: RwLock<Arc<Config>>,
    /// Each level's queue set by name, kept across configurations.
    sets: Mutex<BTreeMap<String, Arc<QueueSet>>>,
    metrics: FlowMetrics,
    retry_after: Mutex<HashMap<Arc<str>, RetryAfter>>,
    /// The watches running, which writes' seats count.
    watches: watches::Watches,
}

impl FlowControl {
    /// Priority and fairness over `server_limit` seats, configured by the
    /// bootstrap objects until the controller reads the real ones.
    pub fn new(server_limit: u32, metrics: FlowMetrics) -> FlowControl {
        let flow_control = FlowControl {
            server_limit,
            config: RwLock::new(Arc::new(Config {
                schemas: Vec::new(),
                catch_all: Arc::new(Schema::unlimited()),
                levels: BTreeMap::new(),
            })),
            sets: Mutex::default(),
            metrics,
            retry_after: Mutex::default(),
            watches: watches::Watches::default(),
        };
        let objects = |list: &str| -> Vec<Value> {
            bootstrap::objects(list)
                .into_iter()
                .map(|o| serde_json::json!({"metadata": {"name": o.name}, "spec": o.spec}))
                .collect()
        };
        let (fs, plc) = (
            objects("flowSchemas"),
            objects("priorityLevelConfigurations"),
        );
        flow_control.configure(
            &fs.iter().collect::<Vec<_>>(),
            &plc.iter().collect::<Vec<_>>(),
        );
        flow_control
    }

    /// Takes the configuration of these objects.
    pub fn configure(&self, flow_schemas: &[&Value], priority_levels: &[&Value]) {
        let config = {
            let mut sets = self.sets.lock().unwrap_or_else(PoisonError::into_inner);
            config::digest(
                flow_schemas,
                priority_levels,
                self.server_limit,
                &mut sets,
                &self.metrics,
            )
        };
        for level in config.levels.values() {
            self.metrics
                .set_bounds(&level.name, level.nominal, level.min, level.max);
        }
        *self.config.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(config);
        self.share_out();
    }

    /// Shares the server's seats out again by the levels' demand since the
    /// last time (upstream's `updateBorrowingLocked`): every [`borrowing::PERIOD`]
    /// and after each configuration.
    pub fn share_out(&self) {
        let config = self.config();
        let levels: Vec<&Arc<Level>> = config.levels.values().collect();
        let stats: Vec<_> = levels.iter().map(|l| l.set.observe_demand()).collect();
        let nominal_sum: u32 = levels.iter().map(|l| l.nominal).sum();
        // The exempt level takes what it used; the others share the rest.
        let mut remaining = i64::from(nominal_sum);
        let mut classes = Vec::new();
        let (mut min_sum, mut min_current_sum) = (0i64, 0i64);
        let mut current = vec![0u32; levels.len()];
        let mut targets = vec![0.0; levels.len()];
        for (i, (level, stats)) in levels.iter().zip(&stats).enumerate() {
            if level.shape == queueset::Dispatch::Exempt {
                current[i] = level.min.max(stats.high_watermark);
                targets[i] = f64::from(current[i]);
                remaining -= i64::from(current[i]);
                continue;
            }
            let min_current = level.min.max(level.nominal.min(stats.high_watermark));
            let target = f64::from(min_current).max(stats.smoothed);
            targets[i] = target;
            classes.push((
                i,
                borrowing::Class {
                    lower: f64::from(min_current),
                    upper: f64::from(level.max),
                    target,
                },
            ));
            min_sum += i64::from(level.min);
            min_current_sum += i64::from(min_current);
        }
        if classes.is_empty() {
            return;
        }
        let fair = if remaining <= min_sum {
            for (i, _) in &classes {
                current[*i] = levels[*i].min;
            }
            0.0
        } else if remaining <= min_current_sum {
            let share = (remaining - min_sum) as f64 / (min_current_sum - min_sum) as f64;
            for (i, class) in &classes {
                let min = levels[*i].min;
                let above = (class.lower - f64::from(min)) * share;
                current[*i] = min + above.round() as u32;
            }
            0.0
        } else {
            let only: Vec<_> = classes.iter().map(|(_, c)| *c).collect();
            match borrowing::allocate(f64::from(nominal_sum), &only) {
                Ok((shares, fair)) => {
                    for ((i, _), share) in classes.iter().zip(shares) {
                        current[*i] = share.round() as u32;
                    }
                    fair
                }
                Err(error) => {
                    tracing::error!(%error, "cannot share the priority levels' seats out; keeping them");
                    for (i, _) in &classes {
                        current[*i] = levels[*i].set.limit();
                    }
                    0.0
                }
            }
        };
        for (i, level) in levels.iter().enumerate() {
            level.set.set_limit(current[i]);
            self.metrics
                .note_adjustment(&level.name, &stats[i], targets[i], current[i]);
        }
        self.metrics.set_fair_frac(fair);
    }

    /// Shares the seats out every [`borrowing::PERIOD`], for as long as it runs.
    pub async fn run_borrowing(self: Arc<Self>) {
        let mut every = tokio::time::interval(borrowing::PERIOD);
        every.tick().await;
        loop {
            every.tick().await;
            self.share_out();
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> Arc<Config> {
        self.config
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The schema a request matches (the catch-all when none does).
    pub fn classify(config: &Config, request: &Descriptor<'_>) -> Arc<Schema> {
        config
            .schemas
            .iter()
            .find(|s| s.spec.matches(request))
            .unwrap_or(&config.catch_all)
            .clone()
    }

    async fn serve(&self, request: Request, next: Next, count: ObjectCount<'_>) -> Response {
        let info = RequestInfo::of(&request);
        let path = request.uri().path();
        let watch = info.watch;
        let resource = info.resource();
        if let Some(r) = &resource
            && is_long_running(r)
        {
            return next.run(request).await;
        }
        let user = crate::user::user_of(&request);
        let descriptor = Descriptor {
            user: &user,
            target: match &resource {
                Some(r) => Requested::Resource {
                    verb: r.verb.as_str(),
                    group: r.group,
                    resource: r.resource,
                    subresource: r.subresource,
                    namespace: r.namespace,
                },
                None => Requested::NonResource {
                    verb: info.method.as_ref(),
                    path,
                },
            },
        };
        let config = self.config();
        let schema = Self::classify(&config, &descriptor);
        let level = &schema.level;
        let metrics = &schema.metrics;
        let written = resource.as_ref().and_then(|r| self.watches.interested(r));
        let (seats, linger) = match (&resource, written) {
            (_, Some(watching)) => {
                metrics.watch_count.observe(f64::from(watching));
                let estimate = watches::estimate(watching, level.max_seats);
                (estimate.seats, estimate.linger)
            }
            (Some(r), None) => {
                let seats = width::seats(r, &info, || count(r.group, r.resource), level.max_seats);
                (seats, Duration::ZERO)
            }
            (None, None) => (1, Duration::ZERO),
        };
        metrics.estimated_seats.observe(f64::from(seats));
        let flow = if level.distinguishes_flows() {
            flow_hash(&schema.name, schema.spec.distinguisher(&descriptor))
        } else {
            0
        };
        let wait = wait_limit(&info);
        let mutating = resource
            .as_ref()
            .is_some_and(|r| !matches!(r.verb, Verb::Get | Verb::List | Verb::Watch));
        let queued = &self.metrics.waiting_by_kind[usize::from(mutating)];
        let arrived = Instant::now();
        metrics.in_queue.inc();
        queued.inc();
        let acquired = level.set.acquire(flow, seats, wait).await;
        metrics.in_queue.dec();
        queued.dec();
        let waited = arrived.elapsed().as_secs_f64();
        let headers = [
            (FLOW_SCHEMA_UID, header_value(&schema.uid)),
            (PRIORITY_LEVEL_UID, header_value(&level.uid)),
        ];
        let permit = match acquired {
            Ok(permit) => permit,
            Err(refusal) => {
                metrics.waited_rejected.observe(waited);
                match refusal {
                    Refusal::QueueFull => metrics.rejected_queue_full.inc(),
                    Refusal::ConcurrencyLimit => metrics.rejected_limit.inc(),
                    Refusal::TimeOut => metrics.rejected_time_out.inc(),
                };
                let retry_after = self.retry_after(&level.name);
                let mut response = too_many_requests(retry_after);
                response.headers_mut().extend(headers);
                return response;
            }
        };
        metrics.waited_executed.observe(waited);
        metrics.dispatched.inc();
        let inflight = self.metrics.executing_by_kind[usize::from(mutating)].clone();
        let running = Running {
            permit: Some(permit),
            seats,
            linger,
            started: Instant::now(),
            metrics: metrics.clone(),
            inflight,
            watch,
        };
        running.begin();
        // A watch counts for the writes' seats while it runs.
        let counted = resource.as_ref().and_then(|r| {
            self.watches
                .register(r, info.query.field_selector.as_deref())
        });
        // A watch holds its seats until its initial events are sent, not
        // while it runs; any other answer holds them until its body is
        // written (a streamed list is produced as it is sent).
        let (mut response, running) = if watch {
            let (response, initialised) = watch_signal::serve(next.run(request)).await;
            tokio::spawn(async move {
                let _ = tokio::time::timeout(WATCH_START_LIMIT, initialised).await;
                drop(running);
            });
            (response, None)
        } else {
            (next.run(request).await, Some(running))
        };
        response.headers_mut().extend(headers);
        if running.is_none() && counted.is_none() {
            return response;
        }
        response.map(|body| {
            Body::new(Holding {
                body,
                running,
                counted,
            })
        })
    }

    /// The Retry-After of a refusal on `level`: 1 s, doubling (up to 32)
    /// while refusals keep coming and easing back when they stop, as
    /// upstream's dropped-requests tracker.
    fn retry_after(&self, level: &Arc<str>) -> u64 {
        let mut trackers = self
            .retry_after
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        trackers
            .entry(level.clone())
            .or_insert_with(RetryAfter::new)
            .refused(unix_seconds())
    }
}

impl Schema {
    /// A schema that limits nothing (only if the bootstrap data were broken).
    pub(crate) fn unlimited() -> Schema {
        Schema {
            name: config::CATCH_ALL.into(),
            uid: "".into(),
            spec: Default::default(),
            level: Arc::new(config::Level {
                name: config::EXEMPT.into(),
                uid: "".into(),
                shape: queueset::Dispatch::Exempt,
                nominal: 0,
                min: 0,
                max: 0,
                max_seats: config::MAX_SEATS_LIMIT,
                set: QueueSet::new(queueset::Dispatch::Exempt, 0),
            }),
            metrics: FlowMetrics::register(&mut Default::default()).of("exempt", "catch-all"),
        }
    }
}

/// A dispatched request's seats and metrics, given back when it is done.
struct Running {
    permit: Option<Permit>,
    seats: u32,
    /// How long the seats stay taken after the request is done: a write's
    /// event still goes out to its watchers.
    linger: Duration,
    started: Instant,
    metrics: metrics::SchemaMetrics,
    inflight: prometheus_client::metrics::gauge::Gauge,
    watch: bool,
}

impl Running {
    fn begin(&self) {
        self.metrics.executing.inc();
        self.metrics.executing_seats.inc_by(i64::from(self.seats));
        self.inflight.inc();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let permit = self.permit.take();
        if !self.linger.is_zero()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let linger = self.linger;
            runtime.spawn(async move {
                tokio::time::sleep(linger).await;
                drop(permit);
            });
        } else {
            drop(permit);
        }
        self.metrics.executing.dec();
        self.metrics.executing_seats.dec_by(i64::from(self.seats));
        self.inflight.dec();
        let elapsed = self.started.elapsed().as_secs_f64();
        if self.watch {
            self.metrics.executed_watch.observe(elapsed);
        } else {
            self.metrics.executed_regular.observe(elapsed);
        }
    }
}

/// A response body that keeps its request's seats until it is written (or
/// dropped).
struct Holding {
    body: Body,
    running: Option<Running>,
    /// A watch's place among the counted ones, until its stream ends.
    counted: Option<watches::Counted>,
}

impl http_body::Body for Holding {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            self.running.take();
            self.counted.take();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// kube-apiserver's long-running requests other than watches (served
/// outside priority and fairness).
fn is_long_running(request: &ResourceRef<'_>) -> bool {
    matches!(
        request.subresource,
        Some("attach" | "exec" | "proxy" | "log" | "portforward")
    ) || request.resource == "proxy"
}

/// A quarter of the request's deadline (`?timeout=`, at most the server's
/// 60 s), at most a minute; a watch waits 15 s as upstream's.
fn wait_limit(info: &RequestInfo) -> Duration {
    let deadline = if info.watch {
        crate::request_info::REQUEST_TIMEOUT
    } else {
        info.deadline()
    };
    (deadline / 4).min(MAX_WAIT)
}

/// The flow's hash: the first 8 bytes (little-endian) of the SHA-256 of
/// the schema's name, a NUL and the distinguisher, as upstream.
fn flow_hash(schema: &str, distinguisher: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(schema.as_bytes());
    hasher.update([0u8]);
    hasher.update(distinguisher.as_bytes());
    let digest = hasher.finalize();
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(bytes)
}

fn header_value(uid: &str) -> HeaderValue {
    HeaderValue::from_str(uid).unwrap_or(HeaderValue::from_static(""))
}

/// kube-apiserver's 429: plain text, with `Retry-After`.
pub fn too_many_requests(retry_after: u64) -> Response {
    let mut response =
        crate::api_error::plain_text(StatusCode::TOO_MANY_REQUESTS, TOO_MANY.to_owned());
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    response
}

fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The Retry-After of one level (upstream's droppedRequestsTracker).
struct RetryAfter {
    seconds: u64,
    /// Refusals per second, the last `seconds` of them.
    refusals: std::collections::VecDeque<(u64, u64)>,
    last_second: u64,
    last_increase: u64,
}

impl RetryAfter {
    fn new() -> RetryAfter {
        RetryAfter {
            seconds: 1,
            refusals: Default::default(),
            last_second: 0,
            last_increase: 0,
        }
    }

    /// One more refusal at `now`; the Retry-After to send.
    fn refused(&mut self, now: u64) -> u64 {
        if now != self.last_second {
            // A new second: judge the window before it.
            let since = now.saturating_sub(self.seconds);
            let recent: u64 = self
                .refusals
                .iter()
                .filter(|(s, _)| *s >= since && *s < now)
                .map(|(_, n)| n)
                .sum();
            if recent >= 3 * self.seconds && now - self.last_increase >= self.seconds {
                self.seconds = (self.seconds * 2).min(32);
                self.last_increase = now;
            } else if recent < self.seconds && self.seconds > 1 {
                self.seconds -= 1;
            }
            self.last_second = now;
        }
        match self.refusals.back_mut() {
            Some((second, count)) if *second == now => *count += 1,
            _ => self.refusals.push_back((now, 1)),
        }
        while self.refusals.front().is_some_and(|(s, _)| *s + 64 < now) {
            self.refusals.pop_front();
        }
        self.seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user::UserInfo;

    #[test]
    fn retry_after_grows_under_refusals_and_eases_back() {
        let mut r = RetryAfter::new();
        for _ in 0..5 {
            assert_eq!(r.refused(100), 1);
        }
        // 5 refusals in the last second (>= 3): doubled.
        assert_eq!(r.refused(101), 2);
        // Quiet for a while: back down one at a time.
        assert_eq!(r.refused(110), 1);
    }

    #[test]
    fn the_bootstrap_configuration_classifies() {
        let fc = FlowControl::new(600, FlowMetrics::register(&mut Default::default()));
        let config = fc.config();
        let class = |user: &UserInfo, target| {
            let schema = FlowControl::classify(&config, &Descriptor { user, target });
            (schema.name.to_string(), schema.level.name.to_string())
        };
        let pods = Requested::Resource {
            verb: "list",
            group: "",
            resource: "pods",
            subresource: None,
            namespace: Some("a"),
        };
        assert_eq!(
            class(&UserInfo::apiserver(), pods),
            ("exempt".into(), "exempt".into())
        );
        let alice = UserInfo::new("alice", &[crate::user::AUTHENTICATED]);
        assert_eq!(
            class(&alice, pods),
            ("global-default".into(), "global-default".into())
        );
        assert_eq!(
            class(&UserInfo::controller_manager(), pods),
            ("kube-controller-manager".into(), "workload-high".into())
        );
        let sa = UserInfo::new(
            "system:serviceaccount:default:x",
            &["system:serviceaccounts", crate::user::AUTHENTICATED],
        );
        assert_eq!(
            class(&sa, pods),
            ("service-accounts".into(), "workload-low".into())
        );
        let probe = Requested::NonResource {
            verb: "get",
            path: "/readyz",
        };
        assert_eq!(
            class(&UserInfo::anonymous(), probe),
            ("probes".into(), "exempt".into())
        );
        // No group at all: nothing matches, the catch-all takes it.
        let nobody = UserInfo::new("nobody", &[]);
        assert_eq!(
            class(&nobody, pods),
            ("catch-all".into(), "catch-all".into())
        );
    }

    #[test]
    fn wait_limits() {
        let wait = |query: &str| {
            let info = RequestInfo::parse(&axum::http::Method::GET, "/api/v1/pods", Some(query));
            wait_limit(&info)
        };
        assert_eq!(wait(""), Duration::from_secs(15));
        assert_eq!(wait("timeout=8s"), Duration::from_secs(2));
        assert_eq!(wait("timeout=5m"), Duration::from_secs(15));
        assert_eq!(wait("watch=1&timeout=1s"), Duration::from_secs(15));
    }
}
