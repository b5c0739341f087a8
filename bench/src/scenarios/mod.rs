//! The scenarios, one file each, and what they share: the run's settings, the
//! working set of ConfigMaps the read and update scenarios use, and the report
//! each returns.

pub mod admission;
pub mod aggregated;
pub(crate) mod create;
pub mod etcd;
pub mod get;
pub mod list;
pub mod mixed;
pub mod pods;
pub mod update;
pub mod watch;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Result, bail};
use serde_json::Value;

use crate::http::Target;
use crate::process::Probe;
use crate::workload::{self, Until};

/// A scenario of `--scenario`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scenario {
    /// POST 1 KiB ConfigMaps: creates/s.
    Create,
    /// GET random ConfigMaps of the working set: gets/s.
    Get,
    /// GET then PUT with a changed value, again on 409: updates/s.
    Update,
    /// LIST the namespace's ConfigMaps 500 at a time to the end: items/s.
    List,
    /// Watch latency with 10 watchers.
    Watch10,
    /// Watch latency with 1000 watchers.
    Watch1000,
    /// Watch latency and server CPU with 500 kubelet-style watches, one per
    /// node, each selecting its node's pods.
    WatchNodes,
    /// 80% gets, 10% lists (limit=100), 10% updates: requests/s and latency.
    Mixed,
    /// Many pods: create rate, full and paged LIST time, the server's memory.
    Pods50k,
    /// `create` with one mutating and one validating webhook (served by
    /// kapi-bench itself) called for every create.
    CreateWebhooks,
    /// `create` with one ValidatingAdmissionPolicy bound to every create.
    CreatePolicy,
    /// GETs of a custom resource of an extension server
    /// (`--extension-server`), directly and through the aggregator.
    GetAggregated,
    /// etcd's own put rate of 1 KiB values (the URL is etcd's client URL).
    EtcdPut,
}

impl Scenario {
    /// Its `--scenario` name, also its key in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Create => "create",
            Scenario::Get => "get",
            Scenario::Update => "update",
            Scenario::List => "list",
            Scenario::Watch10 => "watch10",
            Scenario::Watch1000 => "watch1000",
            Scenario::WatchNodes => "watch-nodes",
            Scenario::Mixed => "mixed",
            Scenario::Pods50k => "pods50k",
            Scenario::CreateWebhooks => "create-webhooks",
            Scenario::CreatePolicy => "create-policy",
            Scenario::GetAggregated => "get-aggregated",
            Scenario::EtcdPut => "etcd-put",
        }
    }

    /// The Kubernetes scenarios, in the order they run by default (the pods last,
    /// so that 50,000 of them weigh on no other figure).
    pub fn kubernetes() -> Vec<Scenario> {
        vec![
            Scenario::Create,
            Scenario::Get,
            Scenario::Update,
            Scenario::List,
            Scenario::Watch10,
            Scenario::Watch1000,
            Scenario::WatchNodes,
            Scenario::Mixed,
            Scenario::Pods50k,
        ]
    }

    /// Whether it reads or updates the working set of ConfigMaps.
    fn needs_working_set(self) -> bool {
        !matches!(
            self,
            Scenario::Create
                | Scenario::WatchNodes
                | Scenario::Pods50k
                | Scenario::EtcdPut
                | Scenario::CreateWebhooks
                | Scenario::CreatePolicy
                | Scenario::GetAggregated
        )
    }
}

/// What a scenario measured: JSON figures and one line for people.
pub struct Report {
    /// The scenario's figures.
    pub json: Value,
    /// A one-line summary.
    pub line: String,
}

/// The settings every scenario runs with.
pub struct Context {
    /// The server.
    pub target: Arc<Target>,
    /// The namespace the run works in.
    pub namespace: String,
    /// Concurrent clients.
    pub clients: usize,
    /// How long each timed phase lasts.
    pub duration: Duration,
    /// How many ConfigMaps the read and update scenarios spread over.
    pub working_set: u64,
    /// How many pods `pods50k` creates.
    pub pods: u64,
    /// Updates per second during the watch scenarios.
    pub watch_rate: f64,
    /// Watches per HTTP/2 connection (kube-apiserver allows 100 streams).
    pub streams_per_connection: usize,
    /// The server process, when `--pid` is given.
    pub server: Option<Arc<Probe>>,
    /// Whether the working set exists.
    pub working_set_ready: AtomicBool,
    /// The extension server of `get-aggregated` and its port.
    pub extension: Option<(Arc<Target>, u16)>,
}

impl Context {
    /// The server's CPU time so far, when its PID is known.
    pub fn server_cpu_seconds(&self) -> Option<f64> {
        self.server.as_ref().and_then(|p| p.cpu_seconds())
    }

    /// The server's CPU milliseconds per operation since `before` (read with
    /// [`Context::server_cpu_seconds`]), over `ops` operations: what one
    /// create costs the server, the rest of the scenario left out.
    pub fn cpu_ms_per_op(&self, before: Option<f64>, ops: u64) -> Option<f64> {
        let spent = self.server_cpu_seconds()? - before?;
        (ops > 0).then(|| (spent * 1000.0 / ops as f64 * 1000.0).round() / 1000.0)
    }
}

/// Runs one scenario.
pub async fn run(scenario: Scenario, cx: &Context) -> Result<Report> {
    if scenario.needs_working_set() && !cx.working_set_ready.load(Ordering::Relaxed) {
        ensure_working_set(cx).await?;
    }
    match scenario {
        Scenario::Create => create::run(cx).await,
        Scenario::Get => get::run(cx).await,
        Scenario::Update => update::run(cx).await,
        Scenario::List => list::run(cx).await,
        Scenario::Watch10 => watch::run(cx, 10).await,
        Scenario::Watch1000 => watch::run(cx, 1000).await,
        Scenario::WatchNodes => watch::run_nodes(cx).await,
        Scenario::Mixed => mixed::run(cx).await,
        Scenario::Pods50k => pods::run(cx).await,
        Scenario::EtcdPut => etcd::run(cx).await,
        Scenario::CreateWebhooks => admission::run(cx, admission::Kind::Webhooks).await,
        Scenario::CreatePolicy => admission::run(cx, admission::Kind::Policy).await,
        Scenario::GetAggregated => match &cx.extension {
            Some((target, port)) => aggregated::run(cx, target, *port).await,
            None => anyhow::bail!("get-aggregated needs --extension-server"),
        },
    }
}

/// Creates whichever of the working set's ConfigMaps are missing (untimed).
pub async fn ensure_working_set(cx: &Context) -> Result<()> {
    let operation = Arc::new(create::CreateConfigMap::new(cx, true));
    let totals = workload::run(
        &cx.target,
        cx.clients,
        Until::Count(cx.working_set),
        operation,
    )
    .await;
    if totals.errors > 0 {
        bail!(
            "creating the working set of {} ConfigMaps: {} failed, first: {}",
            cx.working_set,
            totals.errors,
            totals.first_error.unwrap_or_default()
        );
    }
    cx.working_set_ready.store(true, Ordering::Relaxed);
    Ok(())
}
