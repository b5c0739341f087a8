//! `get-aggregated`: GETs of a custom resource served by an extension API
//! server, sent to that server directly and then through the measured
//! server's aggregator (an APIService naming it), one phase each: what the
//! proxy costs in gets/s, latency and the front server's CPU.
//!
//! The extension is given with `--extension-server` (and
//! `--extension-ca-file`); it must accept the same token and trust the
//! measured server's front proxy (a kapi started with
//! `--requestheader-client-ca-file <front>/front-proxy-ca.crt` does).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use hyper::Method;
use serde_json::json;

use super::{Context, Report};
use crate::http::{Client, Target};
use crate::objects::body;
use crate::random::Rng;
use crate::stats::round3;
use crate::workload::{self, Done, Operation, Until};

const GROUP: &str = "bench.kapi.dev";
/// Objects the GETs spread over.
const OBJECTS: u64 = 500;

fn things(namespace: &str) -> String {
    format!("/apis/{GROUP}/v1/namespaces/{namespace}/things")
}

/// GETs one random thing.
struct GetThing {
    namespace: String,
}

impl Operation for GetThing {
    async fn run(&self, client: &mut Client, rng: &mut Rng, _index: u64) -> Result<Done> {
        let n = rng.below(OBJECTS as usize);
        let path = format!("{}/thing-{n}", things(&self.namespace));
        client.call_ok(Method::GET, &path, None).await?;
        Ok(Done::one("get"))
    }
}

/// Creates thing `index`.
struct CreateThing {
    namespace: String,
}

impl Operation for CreateThing {
    async fn run(&self, client: &mut Client, _rng: &mut Rng, index: u64) -> Result<Done> {
        let thing = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Thing",
            "metadata": {"name": format!("thing-{index}")},
            "spec": {"size": index, "note": "x".repeat(512)}});
        let (status, answer) = client
            .call(Method::POST, &things(&self.namespace), Some(body(&thing)))
            .await?;
        if !status.is_success() && status.as_u16() != 409 {
            bail!(
                "creating a thing: {}",
                crate::http::status_error(status, &answer)
            );
        }
        Ok(Done::one("create"))
    }
}

/// Polls `check` every 200 ms for up to a minute.
async fn wait(what: &str, mut check: impl AsyncFnMut() -> bool) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check().await {
        if Instant::now() > deadline {
            bail!("waited a minute for {what}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}

/// Runs the scenario against `extension`.
pub async fn run(cx: &Context, extension: &Arc<Target>, extension_port: u16) -> Result<Report> {
    let mut front = Client::new(cx.target.clone());
    let mut direct = Client::new(extension.clone());
    // The kind, on the extension.
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("things.{GROUP}")},
        "spec": {"group": GROUP, "scope": "Namespaced",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let _ = direct
        .call(
            Method::POST,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            Some(body(&crd)),
        )
        .await?;
    crate::namespace::create(&mut direct, &cx.namespace)
        .await
        .context("the namespace on the extension")?;
    let listed = things(&cx.namespace);
    wait("the kind on the extension", async || {
        matches!(direct.call(Method::GET, &listed, None).await, Ok((s, _)) if s.is_success())
    })
    .await?;
    // Registered with the measured server.
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "bench-extension", "namespace": "default"},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1",
            "ports": [{"port": extension_port}]}});
    let _ = front
        .call(
            Method::POST,
            "/api/v1/namespaces/default/services",
            Some(body(&service)),
        )
        .await?;
    let apiservice = json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": format!("v1.{GROUP}")},
        "spec": {"group": GROUP, "version": "v1", "insecureSkipTLSVerify": true,
            "groupPriorityMinimum": 1000, "versionPriority": 15,
            "service": {"namespace": "default", "name": "bench-extension", "port": extension_port}}});
    let _ = front
        .call(
            Method::POST,
            "/apis/apiregistration.k8s.io/v1/apiservices",
            Some(body(&apiservice)),
        )
        .await?;
    wait("the APIService available", async || {
        matches!(front.call(Method::GET, &listed, None).await, Ok((s, _)) if s.is_success())
    })
    .await?;
    let totals = workload::run(
        extension,
        cx.clients,
        Until::Count(OBJECTS),
        Arc::new(CreateThing {
            namespace: cx.namespace.clone(),
        }),
    )
    .await;
    if totals.errors > 0 {
        bail!(
            "creating things: {}",
            totals.first_error.unwrap_or_default()
        );
    }
    let operation = Arc::new(GetThing {
        namespace: cx.namespace.clone(),
    });
    let phase = async |target: &Arc<Target>| {
        let before = cx.server_cpu_seconds();
        let mut totals = workload::run(
            target,
            cx.clients,
            Until::Elapsed(cx.duration),
            operation.clone(),
        )
        .await;
        let cpu = cx.cpu_ms_per_op(before, totals.ops);
        let rate = totals.rate();
        let latency = totals.all_latencies().summary();
        (rate, latency, cpu, totals.errors)
    };
    let (direct_rate, direct_latency, _, direct_errors) = phase(extension).await;
    let (proxied_rate, proxied_latency, front_cpu, proxied_errors) = phase(&cx.target).await;
    // What this scenario registered goes; the objects go with the
    // extension's namespace.
    let _ = front
        .call(
            Method::DELETE,
            &format!("/apis/apiregistration.k8s.io/v1/apiservices/v1.{GROUP}"),
            None,
        )
        .await;
    let _ = front
        .call(
            Method::DELETE,
            "/api/v1/namespaces/default/services/bench-extension",
            None,
        )
        .await;
    let _ = crate::namespace::delete(&mut direct, &cx.namespace).await;
    let json = json!({
        "direct_gets_per_s": round3(direct_rate),
        "direct_latency": direct_latency,
        "direct_errors": direct_errors,
        "proxied_gets_per_s": round3(proxied_rate),
        "proxied_latency": proxied_latency,
        "proxied_errors": proxied_errors,
        "front_cpu_ms_per_get": front_cpu,
    });
    let line = format!(
        "direct {:.0} gets/s (p99 {} ms), through the aggregator {:.0} gets/s (p99 {} ms, {} ms front CPU per get)",
        direct_rate,
        json["direct_latency"]["p99_ms"],
        proxied_rate,
        json["proxied_latency"]["p99_ms"],
        front_cpu.map_or("?".to_owned(), |c| c.to_string()),
    );
    Ok(Report { json, line })
}
