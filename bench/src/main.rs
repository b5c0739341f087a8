//! kapi-bench: the same scenarios against any Kubernetes API server (kapi,
//! kube-apiserver) over HTTP(S) with a bearer token, with the server's resident
//! memory and CPU time when its PID is given. See BENCHMARKS.md at the repository
//! root, and `bench/compare.sh` for kube-apiserver and kapi side by side.

mod http;
mod namespace;
mod objects;
mod process;
mod random;
mod scenarios;
mod stats;
mod tls;
mod workload;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use clap::Parser;
use serde_json::{Map, Value, json};

use crate::http::{Client, Protocol, Target};
use crate::process::Probe;
use crate::scenarios::{Context, Scenario};
use crate::stats::round3;

/// Measures a Kubernetes API server: creates, gets, updates, paged lists, watch
/// latency, a large pod list and its memory, a mixed load.
#[derive(Parser)]
#[command(name = "kapi-bench", version)]
struct Args {
    /// The server's URL (`https://127.0.0.1:6443`); for `etcd-put`, etcd's client URL.
    #[arg(long)]
    server: String,
    /// Bearer token sent with every request.
    #[arg(long)]
    token: Option<String>,
    /// Accept any TLS certificate from the server.
    #[arg(long, conflicts_with = "ca_file")]
    insecure: bool,
    /// Trust the server certificates this CA (PEM) signed.
    #[arg(long)]
    ca_file: Option<PathBuf>,
    /// The server's process: its memory (VmRSS) and CPU time are reported.
    #[arg(long)]
    pid: Option<u32>,
    /// etcd's process behind the server, reported apart (kube-apiserver + etcd is
    /// what kapi on its embedded store replaces).
    #[arg(long)]
    etcd_pid: Option<u32>,
    /// Length of each timed phase.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Concurrent clients, each on its own connection.
    #[arg(long, default_value_t = 32)]
    clients: usize,
    /// Scenarios to run, in order (default: all but etcd-put).
    #[arg(long, value_enum, value_delimiter = ',')]
    scenario: Vec<Scenario>,
    /// ConfigMaps the get, update, list, watch and mixed scenarios work on.
    #[arg(long, default_value_t = 2000)]
    working_set: u64,
    /// Pods `pods50k` creates.
    #[arg(long, default_value_t = 50_000)]
    pods: u64,
    /// Updates per second during the watch scenarios.
    #[arg(long, default_value_t = 50.0)]
    watch_rate: f64,
    /// HTTP version: h2 (ALPN over TLS, prior knowledge over plain HTTP) or h1.
    #[arg(long, value_enum, default_value_t = Protocol::H2)]
    protocol: Protocol,
    /// Watches per HTTP/2 connection (kube-apiserver allows 100 streams).
    #[arg(long, default_value_t = 100)]
    streams_per_connection: usize,
    /// The extension API server `get-aggregated` registers with the
    /// measured server (the same token must work there).
    #[arg(long)]
    extension_server: Option<String>,
    /// The CA of `--extension-server`'s certificate.
    #[arg(long)]
    extension_ca_file: Option<PathBuf>,
    /// Leave the namespace and everything in it at the end.
    #[arg(long)]
    keep: bool,
    /// Write the figures as one JSON object to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kapi-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The whole run: namespace, scenarios, figures.
async fn run(args: Args) -> Result<()> {
    let scenarios = if args.scenario.is_empty() {
        Scenario::kubernetes()
    } else {
        args.scenario.clone()
    };
    let on_etcd = scenarios.contains(&Scenario::EtcdPut);
    if on_etcd && scenarios.len() > 1 {
        bail!("etcd-put talks to etcd itself: run it on its own");
    }
    // etcd's client port answers HTTP/2 with gRPC; its JSON gateway wants HTTP/1.1.
    let protocol = if on_etcd { Protocol::H1 } else { args.protocol };
    let target = Arc::new(target(&args, protocol)?);
    let server = args
        .pid
        .map(|pid| Arc::new(Probe::start(pid, SAMPLE_EVERY)));
    let etcd = args.etcd_pid.map(|pid| Probe::start(pid, SAMPLE_EVERY));
    let mut cx = context(&args, target.clone(), server.clone());
    if let Some(url) = &args.extension_server {
        let alpn: &[&[u8]] = &[b"h2", b"http/1.1"];
        let trust = match &args.extension_ca_file {
            Some(ca) => tls::Trust::CaFile(ca),
            None => tls::Trust::Insecure,
        };
        let tls = Some(tls::client_config(trust, alpn)?);
        let port: u16 = url
            .rsplit(':')
            .next()
            .and_then(|p| p.trim_end_matches('/').parse().ok())
            .context("--extension-server needs a port")?;
        let target = Target::new(url, args.token.clone(), tls, protocol)?;
        cx.extension = Some((Arc::new(target), port));
    }
    println!(
        "kapi-bench: {} ({:?}), namespace {}, {} clients, {} s phases",
        args.server, protocol, cx.namespace, cx.clients, args.seconds
    );
    let rss_start = server.as_ref().and_then(|p| p.rss_mib());
    let etcd_rss_start = etcd.as_ref().and_then(Probe::rss_mib);
    let mut admin = Client::new(target);
    if !on_etcd {
        namespace::create(&mut admin, &cx.namespace)
            .await
            .with_context(|| format!("creating namespace {}", cx.namespace))?;
    }

    let mut results = Map::new();
    for scenario in scenarios {
        let json = run_one(scenario, &cx, server.as_deref(), etcd.as_ref()).await;
        results.insert(scenario.name().to_owned(), json);
    }

    if !on_etcd
        && !args.keep
        && let Err(e) = namespace::delete(&mut admin, &cx.namespace).await
    {
        eprintln!("deleting namespace {}: {e:#}", cx.namespace);
    }
    let summary = json!({
        "server": args.server,
        "protocol": format!("{protocol:?}").to_lowercase(),
        "namespace": cx.namespace,
        "seconds": args.seconds,
        "clients": args.clients,
        "working_set": args.working_set,
        "pods": args.pods,
        "watch_rate": args.watch_rate,
        "scenarios": results,
        "rss_mib": memory(server.as_deref(), rss_start),
        "etcd_rss_mib": memory(etcd.as_ref(), etcd_rss_start),
    });
    match &args.json {
        Some(path) => write_json(path, &summary),
        None => Ok(()),
    }
}

/// The scenarios' settings from the command line.
fn context(args: &Args, target: Arc<Target>, server: Option<Arc<Probe>>) -> Context {
    Context {
        target,
        namespace: namespace::random_name(),
        clients: args.clients,
        duration: Duration::from_secs(args.seconds),
        working_set: args.working_set,
        pods: args.pods,
        watch_rate: args.watch_rate,
        streams_per_connection: args.streams_per_connection,
        server,
        working_set_ready: AtomicBool::new(false),
        extension: None,
    }
}

/// Writes the run's figures as pretty JSON.
fn write_json(path: &Path, summary: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(summary).context("encoding the figures")?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

/// How often the memory of `--pid` and `--etcd-pid` is sampled for peaks.
const SAMPLE_EVERY: Duration = Duration::from_millis(50);

/// The server to measure, from the command line.
fn target(args: &Args, protocol: Protocol) -> Result<Target> {
    let alpn: &[&[u8]] = match protocol {
        Protocol::H2 => &[b"h2", b"http/1.1"],
        Protocol::H1 => &[b"http/1.1"],
    };
    let tls = if args.insecure {
        Some(tls::client_config(tls::Trust::Insecure, alpn)?)
    } else if let Some(ca) = &args.ca_file {
        Some(tls::client_config(tls::Trust::CaFile(ca), alpn)?)
    } else {
        None
    };
    Target::new(&args.server, args.token.clone(), tls, protocol)
}

/// Runs one scenario and returns its figures, with the memory and CPU time of
/// the server (and etcd) added; a failure is recorded as `{"error": ...}`.
async fn run_one(
    scenario: Scenario,
    cx: &Context,
    server: Option<&Probe>,
    etcd: Option<&Probe>,
) -> Value {
    let cpu_before = server.and_then(Probe::cpu_seconds);
    let etcd_cpu_before = etcd.and_then(Probe::cpu_seconds);
    if let Some(probe) = server {
        probe.reset_peak();
    }
    let (mut json, line) = match scenarios::run(scenario, cx).await {
        Ok(report) => (report.json, report.line),
        Err(e) => (
            json!({ "error": format!("{e:#}") }),
            format!("FAILED: {e:#}"),
        ),
    };
    println!("{:<10} {line}", scenario.name());
    if let Some(probe) = server {
        json["rss_mib"] = json!(probe.rss_mib().map(round3));
        json["rss_mib_peak"] = json!(round3(probe.peak_mib()));
        json["server_cpu_s"] = json!(cpu_delta(probe, cpu_before));
    }
    if let Some(probe) = etcd {
        json["etcd_rss_mib"] = json!(probe.rss_mib().map(round3));
        json["etcd_cpu_s"] = json!(cpu_delta(probe, etcd_cpu_before));
    }
    json
}

fn cpu_delta(probe: &Probe, before: Option<f64>) -> Option<f64> {
    Some(round3(probe.cpu_seconds()? - before?))
}

/// `{"start", "end", "peak"}` resident memory of a process over the run.
fn memory(probe: Option<&Probe>, start: Option<f64>) -> Value {
    match probe {
        Some(probe) => json!({
            "start": start.map(round3),
            "end": probe.rss_mib().map(round3),
            "peak": probe.hwm_mib().map(round3),
        }),
        None => Value::Null,
    }
}
