//! Priority and fairness metrics under kube-apiserver's names and labels
//! (`apiserver_flowcontrol_*`), so dashboards made for it read these.
//!
//! Each schema's handles are looked up once per configuration, not per
//! request.

use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;
type FloatGauge = Gauge<f64, AtomicU64>;
type Histograms = Family<Labels, Histogram, fn() -> Histogram>;

/// Upstream's buckets of waiting and execution times (seconds).
const TIME_BUCKETS: [f64; 13] = [
    0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0,
];

fn time_histogram() -> Histogram {
    Histogram::new(TIME_BUCKETS)
}

fn watch_count_histogram() -> Histogram {
    Histogram::new([0.0, 1.0, 10.0, 100.0, 1000.0, 10000.0])
}

fn seats_histogram() -> Histogram {
    Histogram::new([1.0, 2.0, 4.0, 10.0])
}

/// Every family, registered once.
#[derive(Clone)]
pub struct FlowMetrics {
    rejected: Family<Labels, Counter>,
    dispatched: Family<Labels, Counter>,
    in_queue: Family<Labels, Gauge>,
    executing: Family<Labels, Gauge>,
    executing_seats: Family<Labels, Gauge>,
    wait: Histograms,
    execution: Histograms,
    watch_count: Histograms,
    estimated_seats: Histograms,
    nominal: Family<Labels, Gauge>,
    current_limit: Family<Labels, Gauge>,
    lower_limit: Family<Labels, Gauge>,
    upper_limit: Family<Labels, Gauge>,
    demand_high_watermark: Family<Labels, FloatGauge>,
    demand_average: Family<Labels, FloatGauge>,
    demand_stdev: Family<Labels, FloatGauge>,
    demand_smoothed: Family<Labels, FloatGauge>,
    target: Family<Labels, FloatGauge>,
    fair_frac: FloatGauge,
    concurrency_limit: Family<Labels, Gauge>,
    inflight: Family<Labels, Gauge>,
    inqueue: Family<Labels, Gauge>,
    /// `apiserver_current_inflight_requests{request_kind}`: reads, writes.
    pub executing_by_kind: [Gauge; 2],
    /// `apiserver_current_inqueue_requests{request_kind}`: reads, writes.
    pub waiting_by_kind: [Gauge; 2],
}

impl FlowMetrics {
    /// The families, registered in `registry`.
    pub fn register(registry: &mut Registry) -> FlowMetrics {
        let metrics = FlowMetrics {
            rejected: Family::default(),
            dispatched: Family::default(),
            in_queue: Family::default(),
            executing: Family::default(),
            executing_seats: Family::default(),
            wait: Family::new_with_constructor(time_histogram as fn() -> Histogram),
            execution: Family::new_with_constructor(time_histogram as fn() -> Histogram),
            watch_count: Family::new_with_constructor(watch_count_histogram as fn() -> Histogram),
            estimated_seats: Family::new_with_constructor(seats_histogram as fn() -> Histogram),
            nominal: Family::default(),
            current_limit: Family::default(),
            lower_limit: Family::default(),
            upper_limit: Family::default(),
            demand_high_watermark: Family::default(),
            demand_average: Family::default(),
            demand_stdev: Family::default(),
            demand_smoothed: Family::default(),
            target: Family::default(),
            fair_frac: FloatGauge::default(),
            concurrency_limit: Family::default(),
            inflight: Family::default(),
            inqueue: Family::default(),
            executing_by_kind: Default::default(),
            waiting_by_kind: Default::default(),
        };
        let flow = registry.sub_registry_with_prefix("apiserver_flowcontrol");
        flow.register(
            "rejected_requests",
            "[BETA] Number of requests rejected by API Priority and Fairness subsystem",
            metrics.rejected.clone(),
        );
        flow.register(
            "dispatched_requests",
            "[BETA] Number of requests executed by API Priority and Fairness subsystem",
            metrics.dispatched.clone(),
        );
        flow.register(
            "current_inqueue_requests",
            "[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem",
            metrics.in_queue.clone(),
        );
        flow.register(
            "current_executing_requests",
            "[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
            metrics.executing.clone(),
        );
        flow.register(
            "current_executing_seats",
            "[BETA] Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
            metrics.executing_seats.clone(),
        );
        flow.register(
            "request_wait_duration_seconds",
            "[BETA] Length of time a request spent waiting in its queue",
            metrics.wait.clone(),
        );
        flow.register(
            "request_execution_seconds",
            "[ALPHA] Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the API Priority and Fairness subsystem",
            metrics.execution.clone(),
        );
        flow.register(
            "watch_count_samples",
            "[ALPHA] count of watchers for mutating requests in API Priority and Fairness",
            metrics.watch_count.clone(),
        );
        flow.register(
            "work_estimated_seats",
            "[ALPHA] Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness",
            metrics.estimated_seats.clone(),
        );
        flow.register(
            "nominal_limit_seats",
            "[BETA] Nominal number of execution seats configured for each priority level",
            metrics.nominal.clone(),
        );
        flow.register(
            "current_limit_seats",
            "[ALPHA] current derived number of execution seats available to each priority level",
            metrics.current_limit.clone(),
        );
        let borrowing: [(&str, &str, &Family<Labels, FloatGauge>); 5] = [
            (
                "demand_seats_high_watermark",
                "[ALPHA] High watermark, over last adjustment period, of demand_seats",
                &metrics.demand_high_watermark,
            ),
            (
                "demand_seats_average",
                "[ALPHA] Time-weighted average, over last adjustment period, of demand_seats",
                &metrics.demand_average,
            ),
            (
                "demand_seats_stdev",
                "[ALPHA] Time-weighted standard deviation, over last adjustment period, of demand_seats",
                &metrics.demand_stdev,
            ),
            (
                "demand_seats_smoothed",
                "[ALPHA] Smoothed seat demands",
                &metrics.demand_smoothed,
            ),
            (
                "target_seats",
                "[ALPHA] Seat allocation targets",
                &metrics.target,
            ),
        ];
        for (name, help, family) in borrowing {
            flow.register(name, help, family.clone());
        }
        flow.register(
            "lower_limit_seats",
            "[ALPHA] Configured lower bound on number of execution seats available to each priority level",
            metrics.lower_limit.clone(),
        );
        flow.register(
            "upper_limit_seats",
            "[ALPHA] Configured upper bound on number of execution seats available to each priority level",
            metrics.upper_limit.clone(),
        );
        flow.register(
            "seat_fair_frac",
            "[ALPHA] Fair fraction of server's concurrency to allocate to each priority level that can use it",
            metrics.fair_frac.clone(),
        );
        flow.register(
            "request_concurrency_limit",
            "[ALPHA] Nominal number of execution seats configured for each priority level (deprecated: use nominal_limit_seats)",
            metrics.concurrency_limit.clone(),
        );
        let server = registry.sub_registry_with_prefix("apiserver");
        server.register(
            "current_inflight_requests",
            "[STABLE] Number of requests currently being executed, by request kind (readOnly or mutating)",
            metrics.inflight.clone(),
        );
        server.register(
            "current_inqueue_requests",
            "[ALPHA] Number of requests currently waiting in priority and fairness queues, by request kind",
            metrics.inqueue.clone(),
        );
        let mut metrics = metrics;
        for (i, kind) in ["readOnly", "mutating"].into_iter().enumerate() {
            let labels = vec![("request_kind", kind.to_owned())];
            let executing = metrics.inflight.get_or_create(&labels).clone();
            let waiting = metrics.inqueue.get_or_create(&labels).clone();
            metrics.executing_by_kind[i] = executing;
            metrics.waiting_by_kind[i] = waiting;
        }
        metrics
    }

    /// A level's configured seats: nominal, and the bounds borrowing keeps
    /// it within.
    pub fn set_bounds(&self, level: &str, nominal: u32, lower: u32, upper: u32) {
        let labels = vec![("priority_level", level.to_owned())];
        // One statement each: `get_or_create` holds the family's lock until
        // the end of its statement.
        self.nominal.get_or_create(&labels).set(i64::from(nominal));
        self.concurrency_limit
            .get_or_create(&labels)
            .set(i64::from(nominal));
        self.lower_limit
            .get_or_create(&labels)
            .set(i64::from(lower));
        self.upper_limit
            .get_or_create(&labels)
            .set(i64::from(upper));
    }

    /// A level's demand and the seats it was given by the last sharing out.
    pub fn note_adjustment(
        &self,
        level: &str,
        demand: &super::borrowing::DemandStats,
        target: f64,
        current: u32,
    ) {
        let labels = vec![("priority_level", level.to_owned())];
        self.current_limit
            .get_or_create(&labels)
            .set(i64::from(current));
        self.demand_high_watermark
            .get_or_create(&labels)
            .set(f64::from(demand.high_watermark));
        self.demand_average
            .get_or_create(&labels)
            .set(demand.average);
        self.demand_stdev
            .get_or_create(&labels)
            .set(demand.deviation);
        self.demand_smoothed
            .get_or_create(&labels)
            .set(demand.smoothed);
        self.target.get_or_create(&labels).set(target);
    }

    /// The fair fraction of the last sharing out.
    pub fn set_fair_frac(&self, fair: f64) {
        self.fair_frac.set(fair);
    }

    /// The handles of one schema on its level.
    pub fn of(&self, level: &str, schema: &str) -> SchemaMetrics {
        let labels: Labels = vec![
            ("priority_level", level.to_owned()),
            ("flow_schema", schema.to_owned()),
        ];
        let with = |name: &'static str, value: &str| {
            let mut l = labels.clone();
            l.push((name, value.to_owned()));
            l
        };
        // One statement each: `get_or_create` holds the family's lock until
        // the end of the statement it is in.
        let dispatched = self.dispatched.get_or_create(&labels).clone();
        let rejected_queue_full = self
            .rejected
            .get_or_create(&with("reason", "queue-full"))
            .clone();
        let rejected_limit = self
            .rejected
            .get_or_create(&with("reason", "concurrency-limit"))
            .clone();
        let rejected_time_out = self
            .rejected
            .get_or_create(&with("reason", "time-out"))
            .clone();
        let in_queue = self.in_queue.get_or_create(&labels).clone();
        let executing = self.executing.get_or_create(&labels).clone();
        let executing_seats = self.executing_seats.get_or_create(&labels).clone();
        let waited_executed = self.wait.get_or_create(&with("execute", "true")).clone();
        let waited_rejected = self.wait.get_or_create(&with("execute", "false")).clone();
        let executed_regular = self
            .execution
            .get_or_create(&with("type", "regular"))
            .clone();
        let executed_watch = self.execution.get_or_create(&with("type", "watch")).clone();
        let watch_count = self.watch_count.get_or_create(&labels).clone();
        let estimated_seats = self.estimated_seats.get_or_create(&labels).clone();
        SchemaMetrics {
            watch_count,
            estimated_seats,
            dispatched,
            rejected_queue_full,
            rejected_limit,
            rejected_time_out,
            in_queue,
            executing,
            executing_seats,
            waited_executed,
            waited_rejected,
            executed_regular,
            executed_watch,
        }
    }
}

/// One schema's metric handles.
#[derive(Clone)]
pub struct SchemaMetrics {
    /// Requests dispatched.
    pub dispatched: Counter,
    /// Refused: queue full.
    pub rejected_queue_full: Counter,
    /// Refused: no seats on a Reject level.
    pub rejected_limit: Counter,
    /// Refused: waited too long.
    pub rejected_time_out: Counter,
    /// Requests waiting.
    pub in_queue: Gauge,
    /// Requests executing.
    pub executing: Gauge,
    /// Seats of the requests executing.
    pub executing_seats: Gauge,
    /// Waits that ended in execution.
    pub waited_executed: Histogram,
    /// Waits that ended in refusal.
    pub waited_rejected: Histogram,
    /// Executions of non-watch requests.
    pub executed_regular: Histogram,
    /// Initialisations of watches.
    pub executed_watch: Histogram,
    /// Watches that may see a write's event.
    pub watch_count: Histogram,
    /// The seats each request was estimated to take.
    pub estimated_seats: Histogram,
}
