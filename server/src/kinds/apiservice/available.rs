//! The availability of APIServices served by other servers, as
//! kube-aggregator 1.32's remote availability controller judges it: the
//! Service is there, listens on the port, has endpoints with that port's
//! name (ClusterIP Services only), and the server answers its discovery
//! document (`/apis/<group>/<version>`) with a 2xx to one of five tries.
//! The verdict is the APIService's `Available` condition, with upstream's
//! reasons and messages; other conditions are left as they are.
//!
//! Every such APIService is checked again every 30 seconds, when it
//! changes, and when its Service or Endpoints change.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use kapi_api_types::apiregistration::v1::APIService;
use kapi_api_types::apiregistration::v1::apiservice::APIServiceCondition;
use kapi_api_types::core::v1::{Endpoints, Service};
use kapi_runtime::meta::Time;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::aggregator::{RemoteApis, ServiceTarget};
use crate::controllers::client::{Client, Resource};
use crate::controllers::informer::{self, Event, Source};
use crate::tls_client::Trust;

/// How often every APIService is checked again (upstream's resync).
const RESYNC: Duration = Duration::from_secs(30);
/// The discovery probe's client timeout.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// The guard around each probe.
const PROBE_GUARD: Duration = Duration::from_secs(6);
/// Tries of the discovery probe at once.
const PROBES: usize = 5;

/// What the controller watches.
#[derive(Clone, Copy, Debug)]
enum Watched {
    ApiServices,
    Services,
    Endpoints,
}

enum Seen {
    ApiService(Event<APIService>),
    Service(Box<Event<Service>>),
    Endpoints(Event<Endpoints>),
}

/// The verdict on one APIService.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Verdict {
    status: &'static str,
    reason: &'static str,
    message: String,
}

impl Verdict {
    fn no(reason: &'static str, message: String) -> Verdict {
        Verdict {
            status: "False",
            reason,
            message,
        }
    }
}

fn apiservices() -> Resource {
    Resource::new("apiregistration.k8s.io", "v1", "apiservices", false)
}

/// Runs until `shutdown`, reading and writing through `client` and probing
/// through `remote`'s resolver and identity.
/// `ready` (`apiservice-status-remote-available-controller`) is done once
/// the informers listed.
pub async fn run(
    client: Client,
    remote: Arc<RemoteApis>,
    ready: Option<crate::post_start::Handle>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut informers = JoinSet::new();
    let (tx_a, mut rx_a) = mpsc::channel::<(Watched, Event<APIService>)>(64);
    let (tx_s, mut rx_s) = mpsc::channel::<(Watched, Event<Service>)>(64);
    let (tx_e, mut rx_e) = mpsc::channel::<(Watched, Event<Endpoints>)>(64);
    informer::spawn(
        &mut informers,
        client.clone(),
        Source::all(apiservices()),
        Watched::ApiServices,
        tx_a,
    );
    informer::spawn(
        &mut informers,
        client.clone(),
        Source::all(Resource::new("", "v1", "services", true)),
        Watched::Services,
        tx_s,
    );
    informer::spawn(
        &mut informers,
        client.clone(),
        Source::all(Resource::new("", "v1", "endpoints", true)),
        Watched::Endpoints,
        tx_e,
    );
    let mut state = State::default();
    let mut checks: JoinSet<(String, Verdict)> = JoinSet::new();
    // Which APIService each check task is for, to forget one whose task
    // ended without a verdict.
    let mut tasks: HashMap<tokio::task::Id, String> = HashMap::new();
    let (retry_tx, mut retry_rx) = mpsc::unbounded_channel::<String>();
    let mut resync = tokio::time::interval(RESYNC);
    loop {
        let seen = tokio::select! {
            _ = shutdown.changed() => break,
            _ = resync.tick() => {
                state.dirty.extend(state.remote_names());
                None
            }
            Some((_, e)) = rx_a.recv() => Some(Seen::ApiService(e)),
            Some((_, e)) = rx_s.recv() => Some(Seen::Service(Box::new(e))),
            Some((_, e)) = rx_e.recv() => Some(Seen::Endpoints(e)),
            Some(name) = retry_rx.recv() => {
                state.retrying.remove(&name);
                state.dirty.insert(name);
                None
            }
            Some(done) = checks.join_next_with_id(), if !checks.is_empty() => {
                let id = match &done {
                    Ok((id, _)) => *id,
                    Err(e) => e.id(),
                };
                if let Some(name) = tasks.remove(&id) {
                    state.checking.remove(&name);
                }
                if let Ok((_, (name, verdict))) = done {
                    let failed = verdict.reason == "FailedDiscoveryCheck";
                    let written = state.record(&client, &name, verdict).await;
                    if failed || !written {
                        state.retry_later(&name, &retry_tx);
                    } else {
                        state.failures.remove(&name);
                    }
                }
                None
            }
        };
        if let Some(seen) = seen {
            state.apply(seen);
        }
        if state.listed != [true; 3] {
            continue;
        }
        if let Some(ready) = &ready {
            ready.done();
        }
        let ready: Vec<String> = state
            .dirty
            .iter()
            .filter(|n| !state.checking.contains(*n))
            .cloned()
            .collect();
        for name in ready {
            state.dirty.remove(&name);
            let Some(job) = state.job(&name, &remote) else {
                continue;
            };
            state.checking.insert(name.clone());
            let name_for_task = name.clone();
            let id = checks.spawn(async move { (name.clone(), job.await) }).id();
            tasks.insert(id, name_for_task);
        }
    }
    informers.abort_all();
    checks.abort_all();
}

/// What the controller knows.
#[derive(Default)]
struct State {
    apiservices: BTreeMap<String, APIService>,
    services: BTreeMap<(String, String), Service>,
    endpoints: BTreeMap<(String, String), Endpoints>,
    /// Whether each informer listed.
    listed: [bool; 3],
    /// APIServices to check.
    dirty: BTreeSet<String>,
    /// APIServices being checked.
    checking: BTreeSet<String>,
    /// Failed checks in a row, for the backoff.
    failures: HashMap<String, u32>,
    /// APIServices with a retry waiting (one at a time, as a work queue
    /// keeps one delayed add per key).
    retrying: BTreeSet<String>,
}

fn key_of(meta: &kapi_runtime::meta::ObjectMeta) -> (String, String) {
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

impl State {
    fn remote_names(&self) -> Vec<String> {
        self.apiservices
            .iter()
            .filter(|(_, a)| a.spec.service.is_some())
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// The APIServices whose Service is `key`.
    fn pointing_at(&self, key: &(String, String)) -> Vec<String> {
        self.apiservices
            .iter()
            .filter(|(_, a)| {
                a.spec.service.as_ref().is_some_and(|s| {
                    s.namespace.as_deref().unwrap_or_default() == key.0
                        && s.name.as_deref().unwrap_or_default() == key.1
                })
            })
            .map(|(n, _)| n.clone())
            .collect()
    }

    fn apply(&mut self, seen: Seen) {
        match seen {
            Seen::ApiService(event) => match event {
                Event::Listed(all) => {
                    self.apiservices = all
                        .into_iter()
                        .map(|a| (a.metadata.name.clone().unwrap_or_default(), a))
                        .collect();
                    self.listed[0] = true;
                    self.dirty.extend(self.remote_names());
                }
                Event::Applied(a) => {
                    let name = a.metadata.name.clone().unwrap_or_default();
                    if a.spec.service.is_some() {
                        self.dirty.insert(name.clone());
                    }
                    self.apiservices.insert(name, a);
                }
                Event::Deleted(a) => {
                    let name = a.metadata.name.clone().unwrap_or_default();
                    self.apiservices.remove(&name);
                    self.failures.remove(&name);
                }
            },
            Seen::Service(event) => {
                let touched = match *event {
                    Event::Listed(all) => {
                        self.services = all.into_iter().map(|s| (key_of(&s.metadata), s)).collect();
                        self.listed[1] = true;
                        None
                    }
                    Event::Applied(s) => {
                        let key = key_of(&s.metadata);
                        self.services.insert(key.clone(), s);
                        Some(key)
                    }
                    Event::Deleted(s) => {
                        let key = key_of(&s.metadata);
                        self.services.remove(&key);
                        Some(key)
                    }
                };
                if let Some(key) = touched {
                    self.dirty.extend(self.pointing_at(&key));
                }
            }
            Seen::Endpoints(event) => {
                let touched = match event {
                    Event::Listed(all) => {
                        self.endpoints =
                            all.into_iter().map(|e| (key_of(&e.metadata), e)).collect();
                        self.listed[2] = true;
                        None
                    }
                    Event::Applied(e) => {
                        let key = key_of(&e.metadata);
                        self.endpoints.insert(key.clone(), e);
                        Some(key)
                    }
                    Event::Deleted(e) => {
                        let key = key_of(&e.metadata);
                        self.endpoints.remove(&key);
                        Some(key)
                    }
                };
                if let Some(key) = touched {
                    self.dirty.extend(self.pointing_at(&key));
                }
            }
        }
    }

    /// The check of APIService `name`, judged from what is known now and
    /// finished by the probe.
    fn job(
        &self,
        name: &str,
        remote: &Arc<RemoteApis>,
    ) -> Option<impl std::future::Future<Output = Verdict> + Send + 'static> {
        let apiservice = self.apiservices.get(name)?;
        let reference = apiservice.spec.service.as_ref()?;
        let target = ServiceTarget {
            namespace: reference.namespace.clone().unwrap_or_default(),
            name: reference.name.clone().unwrap_or_default(),
            port: reference.port.unwrap_or(443),
        };
        let early = self.service_verdict(&target);
        let path = if name == "v1." {
            format!(
                "/api/{}",
                apiservice.spec.version.as_deref().unwrap_or_default()
            )
        } else {
            format!(
                "/apis/{}/{}",
                apiservice.spec.group.as_deref().unwrap_or_default(),
                apiservice.spec.version.as_deref().unwrap_or_default()
            )
        };
        let remote = remote.clone();
        Some(async move {
            if let Some(verdict) = early {
                return verdict;
            }
            match probe(&remote, &target, &path).await {
                Ok(()) => Verdict {
                    status: "True",
                    reason: "Passed",
                    message: "all checks passed".to_owned(),
                },
                Err(message) => Verdict::no("FailedDiscoveryCheck", message),
            }
        })
    }

    /// Steps before the probe: the Service, its port and endpoints (the
    /// last two for ClusterIP Services only).
    fn service_verdict(&self, target: &ServiceTarget) -> Option<Verdict> {
        let (namespace, name) = (&target.namespace, &target.name);
        let key = (namespace.clone(), name.clone());
        let Some(service) = self.services.get(&key) else {
            return Some(Verdict::no(
                "ServiceNotFound",
                format!("service/{name} in {namespace:?} is not present"),
            ));
        };
        if service.spec.type_.as_deref().unwrap_or("ClusterIP") != "ClusterIP" {
            return None;
        }
        let Some(port) = service
            .spec
            .ports
            .iter()
            .flatten()
            .find(|p| p.port == target.port)
        else {
            return Some(Verdict::no(
                "ServicePortError",
                format!(
                    "service/{name} in {namespace:?} is not listening on port {}",
                    target.port
                ),
            ));
        };
        let Some(endpoints) = self.endpoints.get(&key) else {
            return Some(Verdict::no(
                "EndpointsNotFound",
                format!("cannot find endpoints for service/{name} in {namespace:?}"),
            ));
        };
        let port_name = port.name.as_deref().unwrap_or_default();
        let has_address = endpoints.subsets.iter().flatten().any(|subset| {
            !subset.addresses.as_deref().unwrap_or_default().is_empty()
                && subset
                    .ports
                    .iter()
                    .flatten()
                    .any(|p| p.name.as_deref().unwrap_or_default() == port_name)
        });
        if !has_address {
            return Some(Verdict::no(
                "MissingEndpoints",
                format!(
                    "endpoints for service/{name} in {namespace:?} have no addresses with port name {port_name:?}"
                ),
            ));
        }
        None
    }

    /// Writes `verdict` as APIService `name`'s `Available` condition
    /// unless it is already so; whether nothing is left to write.
    async fn record(&mut self, client: &Client, name: &str, verdict: Verdict) -> bool {
        let Some(apiservice) = self.apiservices.get(name) else {
            return true;
        };
        if apiservice.spec.service.is_none() {
            return true;
        }
        let mut updated = apiservice.clone();
        let conditions = updated.status.conditions.get_or_insert_with(Vec::new);
        match conditions.iter_mut().find(|c| c.type_ == "Available") {
            Some(current) => {
                if current.status != verdict.status {
                    current.status = verdict.status.to_owned();
                    current.last_transition_time = Some(Time::now());
                }
                current.reason = Some(verdict.reason.to_owned());
                current.message = Some(verdict.message.clone());
            }
            None => conditions.push(APIServiceCondition {
                type_: "Available".to_owned(),
                status: verdict.status.to_owned(),
                last_transition_time: Some(Time::now()),
                reason: Some(verdict.reason.to_owned()),
                message: Some(verdict.message.clone()),
            }),
        }
        if updated.status == apiservice.status {
            return true;
        }
        if verdict.status != "True" || apiservice_available(apiservice) != Some("True") {
            tracing::info!(apiservice = %name, status = verdict.status, reason = verdict.reason,
                message = %verdict.message, "changing APIService availability");
        }
        let Ok(body) = serde_json::to_value(&updated) else {
            return false;
        };
        match client
            .update(&apiservices(), None, name, Some("status"), &body)
            .await
        {
            Ok(_) => true,
            Err(e) if e.is_not_found() => true,
            Err(e) => {
                tracing::debug!(apiservice = %name, error = %e, "could not write availability");
                false
            }
        }
    }

    /// Checks `name` again after upstream's backoff (5 ms doubling to 30 s).
    fn retry_later(&mut self, name: &str, retry: &mpsc::UnboundedSender<String>) {
        if !self.retrying.insert(name.to_owned()) {
            return;
        }
        let failures = self.failures.entry(name.to_owned()).or_default();
        let delay = Duration::from_millis(5)
            .saturating_mul(1 << (*failures).min(13))
            .min(Duration::from_secs(30));
        *failures += 1;
        let (retry, name) = (retry.clone(), name.to_owned());
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let _ = retry.send(name);
        });
    }
}

fn apiservice_available(apiservice: &APIService) -> Option<&str> {
    apiservice
        .status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "Available")
        .map(|c| c.status.as_str())
}

/// Upstream's discovery probe: five GETs of `path` at once, each to the
/// address the resolver gives, as `system:kube-aggregator` in
/// `system:masters`, the server's certificate not checked; the first 2xx
/// is a pass, else the last failure's words.
async fn probe(remote: &RemoteApis, target: &ServiceTarget, path: &str) -> Result<(), String> {
    let insecure = Trust {
        ca_bundle: Vec::new(),
        insecure: true,
    };
    let transport = remote.transport_to(target, &insecure)?;
    let (tx, mut rx) = mpsc::channel(PROBES);
    for _ in 0..PROBES {
        let (tx, transport, target, path) = (
            tx.clone(),
            transport.clone(),
            target.clone(),
            path.to_owned(),
        );
        let resolver = remote.resolver_handle();
        tokio::spawn(async move {
            let resolved = resolver
                .resolve(&target.namespace, &target.name, target.port)
                .await;
            let (host, port) = match resolved {
                Ok(found) => found,
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            };
            let authority = crate::webhook_client::join_host_port(&host, port);
            let url = format!("https://{authority}{path}");
            let attempt = async {
                let request = hyper::Request::get(url.as_str())
                    .header(hyper::header::HOST, authority.as_str())
                    .header("x-remote-user", "system:kube-aggregator")
                    .header("x-remote-group", "system:masters")
                    .body(Body::empty())
                    .map_err(|e| e.to_string())?;
                let answer = match tokio::time::timeout(PROBE_TIMEOUT, transport.send(request))
                    .await
                {
                    Ok(Ok(answer)) => answer,
                    Ok(Err(e)) => {
                        return Err(format!(
                            "failing or missing response from {url}: Get {url:?}: {e}"
                        ));
                    }
                    Err(_) => {
                        return Err(format!(
                            "failing or missing response from {url}: Get {url:?}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
                        ));
                    }
                };
                let code = answer.status().as_u16();
                if !(200..300).contains(&code) {
                    return Err(format!(
                        "failing or missing response from {url}: bad status from {url}: {code}"
                    ));
                }
                Ok(())
            };
            let outcome = match tokio::time::timeout(PROBE_GUARD, attempt).await {
                Ok(outcome) => outcome,
                Err(_) => Err(format!("timed out waiting for {url}")),
            };
            let _ = tx.send(outcome).await;
        });
    }
    drop(tx);
    let mut last = Err("no discovery probe ran".to_owned());
    while let Some(outcome) = rx.recv().await {
        if outcome.is_ok() {
            return Ok(());
        }
        last = outcome;
    }
    last
}
