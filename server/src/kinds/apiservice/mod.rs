//! APIServices of the group versions kapi serves itself, as kube-apiserver
//! 1.32's aggregator keeps them (kube-aggregator's autoregister controller,
//! the crd-autoregistration controller and the local availability
//! controller):
//!
//! - every built-in group version kube-apiserver gives a priority has its
//!   APIService `<version>.<group>` (`v1.` for the core group), labelled
//!   `kube-aggregator.kubernetes.io/automanaged: onstart`: made at start-up,
//!   its spec put back once at start-up, then left to the cluster's owner
//!   until the next start;
//! - every group version a CustomResourceDefinition serves has one labelled
//!   `...automanaged: true`, priorities 1000 and 100, kept as it should be
//!   all along and deleted when no definition serves the version any more;
//! - an APIService without a Service (a local one) is `Available` with
//!   reason `Local` from its creation on, and put back so if changed.
//!
//! An APIService without the label is the cluster owner's and never
//! touched. Writes go through the server's own router as kube-apiserver
//! (manager `kube-apiserver`).

pub mod available;
pub mod resolver;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kapi_api_types::apiregistration::v1::APIService;
use kapi_runtime::meta::Time;
use kapi_runtime::scheme::Scheme;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use base64::Engine;

use crate::aggregator::{RemoteApis, ServiceTarget};
use crate::api_error::ApiResult;
use crate::body::Object;
use crate::controllers::client::{Client, Resource};
use crate::controllers::informer::{self, Event, Source};
use crate::custom::controller::crds;
use crate::post_start::Handle;
use crate::registry::hooks::KindRest;
use crate::scope::Scope;
use crate::tls_client::Trust;
use crate::user::UserInfo;

/// The label the aggregator marks the APIServices it keeps with.
pub const AUTOMANAGED: &str = "kube-aggregator.kubernetes.io/automanaged";

/// kube-apiserver 1.32's priorities of its built-in group versions (group,
/// version, `groupPriorityMinimum`, `versionPriority`): a group version
/// without one gets no APIService.
const PRIORITIES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("events.k8s.io", "v1beta1", 17750, 5),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authentication.k8s.io", "v1beta1", 17700, 9),
    ("authentication.k8s.io", "v1alpha1", 17700, 1),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v2", 17500, 30),
    ("autoscaling", "v1", 17500, 15),
    ("autoscaling", "v2beta1", 17500, 9),
    ("autoscaling", "v2beta2", 17500, 1),
    ("batch", "v1", 17400, 15),
    ("batch", "v1beta1", 17400, 9),
    ("batch", "v2alpha1", 17400, 9),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("certificates.k8s.io", "v1alpha1", 17300, 1),
    ("networking.k8s.io", "v1", 17200, 15),
    ("networking.k8s.io", "v1beta1", 17200, 9),
    ("networking.k8s.io", "v1alpha1", 17200, 1),
    ("policy", "v1", 17100, 15),
    ("policy", "v1beta1", 17100, 9),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("storage.k8s.io", "v1beta1", 16800, 9),
    ("storage.k8s.io", "v1alpha1", 16800, 1),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1beta1", 16700, 12),
    ("admissionregistration.k8s.io", "v1alpha1", 16700, 9),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("coordination.k8s.io", "v1alpha2", 16500, 12),
    ("node.k8s.io", "v1", 16300, 15),
    ("node.k8s.io", "v1beta1", 16300, 9),
    ("node.k8s.io", "v1alpha1", 16300, 1),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("discovery.k8s.io", "v1beta1", 16200, 12),
    ("resource.k8s.io", "v1beta1", 16200, 9),
    ("resource.k8s.io", "v1alpha3", 16200, 1),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
    ("flowcontrol.apiserver.k8s.io", "v1beta3", 16100, 18),
    ("flowcontrol.apiserver.k8s.io", "v1beta2", 16100, 15),
    ("flowcontrol.apiserver.k8s.io", "v1beta1", 16100, 12),
    ("flowcontrol.apiserver.k8s.io", "v1alpha1", 16100, 9),
    ("internal.apiserver.k8s.io", "v1alpha1", 16000, 9),
    ("storagemigration.k8s.io", "v1alpha1", 15800, 9),
];

/// The priorities of a custom resource's group version.
const CUSTOM_PRIORITIES: (i64, i64) = (1000, 100);

/// The condition of a local APIService.
fn local_available(now: &str) -> Value {
    json!({"type": "Available", "status": "True", "lastTransitionTime": now,
        "reason": "Local", "message": "Local APIServices are always available"})
}

fn now() -> String {
    Time::now().to_string()
}

/// APIServices' REST: a local one (no Service) is available from its
/// creation on, as kube-aggregator's strategy makes it.
pub struct ApiServiceRest;

impl KindRest for ApiServiceRest {
    fn prepare_create_for(
        &self,
        _scope: Scope<'_>,
        object: &mut Object,
        _user: &UserInfo,
    ) -> ApiResult<()> {
        let Some(service) = object.downcast_mut::<APIService>() else {
            return Ok(());
        };
        service.status = Default::default();
        if service.spec.service.is_none()
            && let Ok(condition) = serde_json::from_value(local_available(&now()))
        {
            service.status.conditions = Some(vec![condition]);
        }
        Ok(())
    }
}

fn apiservices() -> Resource {
    Resource::new("apiregistration.k8s.io", "v1", "apiservices", false)
}

/// What an APIService of kapi's own is to be.
#[derive(Clone, Debug, PartialEq)]
struct Wanted {
    group: String,
    version: String,
    group_priority: i64,
    version_priority: i64,
    /// `onstart` (a built-in group version) or `true` (a custom one).
    label: &'static str,
}

impl Wanted {
    fn name(&self) -> String {
        format!("{}.{}", self.version, self.group)
    }

    fn spec(&self) -> Value {
        let mut spec = json!({"version": self.version,
            "groupPriorityMinimum": self.group_priority, "versionPriority": self.version_priority});
        if !self.group.is_empty() {
            spec["group"] = json!(self.group);
        }
        spec
    }

    fn object(&self) -> Value {
        json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": self.name(), "labels": {AUTOMANAGED: self.label}},
            "spec": self.spec()})
    }

    /// Whether `spec` (an APIService's, as served) is this one's.
    fn same_spec(&self, spec: &Value) -> bool {
        let text = |key: &str| spec[key].as_str().unwrap_or_default();
        text("group") == self.group
            && text("version") == self.version
            && spec["groupPriorityMinimum"].as_i64() == Some(self.group_priority)
            && spec["versionPriority"].as_i64() == Some(self.version_priority)
            && spec["service"].is_null()
            && !spec["insecureSkipTLSVerify"].as_bool().unwrap_or(false)
            && spec["caBundle"].is_null()
    }
}

/// The built-in group versions of `base` that get an APIService (the
/// aggregator's own group is served in front of them and has none).
fn built_in(base: &Scheme) -> BTreeMap<String, Wanted> {
    let mut wanted = BTreeMap::new();
    for entry in base.entries().filter(|e| !e.is_custom()) {
        let (group, version) = (entry.info.group, entry.info.version);
        if group == "apiregistration.k8s.io" {
            continue;
        }
        match PRIORITIES
            .iter()
            .find(|(g, v, _, _)| (*g, *v) == (group, version))
        {
            Some((_, _, group_priority, version_priority)) => {
                let w = Wanted {
                    group: group.to_owned(),
                    version: version.to_owned(),
                    group_priority: *group_priority,
                    version_priority: *version_priority,
                    label: "onstart",
                };
                wanted.insert(w.name(), w);
            }
            None => {
                tracing::info!(group, version, "Skipping APIService creation");
            }
        }
    }
    wanted
}

/// The group versions the definitions `crds` serve.
fn custom(crds: &BTreeMap<String, Value>) -> BTreeMap<String, Wanted> {
    let mut wanted = BTreeMap::new();
    for crd in crds.values() {
        let group = crd["spec"]["group"].as_str().unwrap_or_default();
        for version in crd["spec"]["versions"].as_array().into_iter().flatten() {
            let Some(name) = version["name"].as_str() else {
                continue;
            };
            if version["served"] != true {
                continue;
            }
            let w = Wanted {
                group: group.to_owned(),
                version: name.to_owned(),
                group_priority: CUSTOM_PRIORITIES.0,
                version_priority: CUSTOM_PRIORITIES.1,
                label: "true",
            };
            wanted.insert(w.name(), w);
        }
    }
    wanted
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Watched {
    Definitions,
    ApiServices,
}

/// The post-start hooks and the plain check the registration reports to.
pub struct Ready {
    /// `start-kube-aggregator-informers`: the CRDs and APIServices listed.
    pub informers: Handle,
    /// `apiservice-status-local-available-controller`: the local
    /// APIServices marked available once.
    pub local: Handle,
    /// `apiservice-registration-controller`: every APIService in the
    /// aggregator's table.
    pub registration: Handle,
    /// `kube-apiserver-autoregistration`: the built-in and CRD APIServices
    /// registered once.
    pub autoregistration: Handle,
    /// `autoregister-completion`: every built-in APIService there and
    /// available (it never goes back).
    pub completion: Handle,
}

/// Runs until `shutdown`: keeps the APIServices of `base`'s built-in group
/// versions and of the custom resources' through `client` (kube-apiserver's
/// own).
pub async fn run(
    client: Client,
    base: Arc<Scheme>,
    remote: Arc<RemoteApis>,
    ready: Ready,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut tasks = JoinSet::new();
    let (tx, mut rx) = mpsc::channel(64);
    informer::spawn(
        &mut tasks,
        client.clone(),
        Source::all(crds()),
        Watched::Definitions,
        tx.clone(),
    );
    informer::spawn(
        &mut tasks,
        client.clone(),
        Source::all(apiservices()),
        Watched::ApiServices,
        tx,
    );
    let built_in = built_in(&base);
    let mut state = State {
        definitions: BTreeMap::new(),
        services: BTreeMap::new(),
        listed: (false, false),
        at_start: None,
        synced: BTreeSet::new(),
    };
    // The local availability controller looks at every APIService again
    // every 30 seconds, as upstream's resync.
    let mut resync = tokio::time::interval(std::time::Duration::from_secs(30));
    loop {
        tokio::select! {
            _ = shutdown.changed() => break,
            _ = resync.tick() => {
                if state.listed == (true, true) {
                    state.mark_local_available(&client).await;
                }
            }
            event = rx.recv() => {
                let Some((watched, event)) = event else { break };
                state.apply(watched, event);
                while let Ok((watched, event)) = rx.try_recv() {
                    state.apply(watched, event);
                }
                route(&remote, &state.services);
                if state.listed != (true, true) {
                    continue;
                }
                ready.informers.done();
                ready.registration.done();
                if state.at_start.is_none() {
                    state.at_start = Some(state.services.keys().cloned().collect());
                }
                let mut wanted = built_in.clone();
                wanted.extend(custom(&state.definitions));
                state.register(&client, &wanted).await;
                ready.autoregistration.done();
                state.mark_local_available(&client).await;
                ready.local.done();
                if ready.completion.state().is_err() {
                    let missing: Vec<&String> = built_in
                        .keys()
                        .filter(|name| !state.services.get(*name).is_some_and(available))
                        .collect();
                    if missing.is_empty() {
                        ready.completion.done();
                    } else {
                        let names: Vec<&str> = missing.iter().map(|n| n.as_str()).collect();
                        ready.completion.fail(format!("missing APIService: [{}]", names.join(" ")));
                    }
                }
            }
        }
    }
    tasks.abort_all();
}

/// Whether an APIService is `Available`.
fn available(service: &Value) -> bool {
    service["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Available" && c["status"] == "True")
}

/// Puts the aggregator's table in line with the APIServices: those naming
/// a Service are passed on to it, the rest served here.
fn route(remote: &RemoteApis, services: &BTreeMap<String, Value>) {
    let mut wanted = BTreeSet::new();
    let mut priorities = crate::aggregator::Priorities::new();
    for service in services.values() {
        let spec = &service["spec"];
        let group = spec["group"].as_str().unwrap_or_default();
        let Some(version) = spec["version"].as_str() else {
            continue;
        };
        priorities.insert(
            (group.to_owned(), version.to_owned()),
            (
                spec["groupPriorityMinimum"].as_i64().unwrap_or_default(),
                spec["versionPriority"].as_i64().unwrap_or_default(),
            ),
        );
        let target = &spec["service"];
        // The aggregator's own group is always served here (upstream serves
        // it ahead of any proxy), so that a bad APIService can be removed.
        if target.is_null() || group == "apiregistration.k8s.io" {
            continue;
        }
        let name = service["metadata"]["name"].as_str().unwrap_or_default();
        let available = service["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Available" && c["status"] == "True");
        let ca_bundle = spec["caBundle"]
            .as_str()
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
            .unwrap_or_default();
        remote.serve_remote(
            group,
            version,
            name,
            ServiceTarget {
                namespace: target["namespace"].as_str().unwrap_or_default().to_owned(),
                name: target["name"].as_str().unwrap_or_default().to_owned(),
                port: target["port"]
                    .as_i64()
                    .and_then(|p| i32::try_from(p).ok())
                    .unwrap_or(443),
            },
            Trust {
                ca_bundle,
                insecure: spec["insecureSkipTLSVerify"].as_bool().unwrap_or(false),
            },
            available,
        );
        wanted.insert((group.to_owned(), version.to_owned()));
    }
    for (key, _) in remote.all() {
        if !wanted.contains(&key) {
            remote.serve_locally(&key.0, &key.1);
        }
    }
    remote.set_priorities(priorities);
}

/// What the registration knows.
struct State {
    definitions: BTreeMap<String, Value>,
    services: BTreeMap<String, Value>,
    /// Whether each of the two lists arrived.
    listed: (bool, bool),
    /// The APIServices there were when both lists arrived.
    at_start: Option<BTreeSet<String>>,
    /// The names handled once without error (an `onstart` one is not
    /// handled again).
    synced: BTreeSet<String>,
}

impl State {
    fn apply(&mut self, watched: Watched, event: Event) {
        let (known, listed) = match watched {
            Watched::Definitions => (&mut self.definitions, &mut self.listed.0),
            Watched::ApiServices => (&mut self.services, &mut self.listed.1),
        };
        let name = |o: &Value| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        };
        match event {
            Event::Listed(all) => {
                *known = all.into_iter().map(|o| (name(&o), o)).collect();
                *listed = true;
            }
            Event::Applied(o) => {
                known.insert(name(&o), o);
            }
            Event::Deleted(o) => {
                known.remove(&name(&o));
            }
        }
    }

    /// kube-aggregator's autoregister decision for every name wanted or
    /// there.
    async fn register(&mut self, client: &Client, wanted: &BTreeMap<String, Wanted>) {
        let names: BTreeSet<String> = wanted.keys().chain(self.services.keys()).cloned().collect();
        for name in names {
            let want = wanted.get(&name);
            let current = self.services.get(&name);
            if want.is_some_and(|w| w.label == "onstart") && self.synced.contains(&name) {
                continue;
            }
            let result = match (current, want) {
                (None, None) => Ok(()),
                (None, Some(want)) => {
                    match client.create(&apiservices(), None, &want.object()).await {
                        Err(e) if e.code() == Some(409) => Ok(()),
                        other => other.map(drop),
                    }
                }
                (Some(current), want) => {
                    let label = current["metadata"]["labels"][AUTOMANAGED].as_str();
                    let at_start = self.at_start.as_ref().is_some_and(|s| s.contains(&name));
                    match label {
                        // Without the label (or with another value): the
                        // cluster owner's.
                        Some("onstart" | "true") => {}
                        _ => {
                            self.synced.insert(name);
                            continue;
                        }
                    }
                    // A built-in one is put right once, at start-up.
                    if label == Some("onstart") && (!at_start || self.synced.contains(&name)) {
                        continue;
                    }
                    match want {
                        None => {
                            let uid = current["metadata"]["uid"].clone();
                            let options = json!({"apiVersion": "v1", "kind": "DeleteOptions",
                                "preconditions": {"uid": uid}});
                            match client.delete(&apiservices(), None, &name, &options).await {
                                Err(e) if e.is_not_found() || e.is_conflict() => Ok(()),
                                other => other.map(drop),
                            }
                        }
                        Some(want) if !want.same_spec(&current["spec"]) => {
                            let mut updated = current.clone();
                            updated["spec"] = want.spec();
                            match client
                                .update(&apiservices(), None, &name, None, &updated)
                                .await
                            {
                                Err(e) if e.is_not_found() || e.is_conflict() => Ok(()),
                                other => other.map(drop),
                            }
                        }
                        Some(_) => Ok(()),
                    }
                }
            };
            match result {
                Ok(()) => {
                    self.synced.insert(name);
                }
                Err(e) => tracing::warn!(apiservice = %name, error = %e, "could not register"),
            }
        }
    }

    /// A local APIService whose condition is not the local one gets it
    /// (its transition time kept unless its status changes).
    async fn mark_local_available(&self, client: &Client) {
        for (name, service) in &self.services {
            if !service["spec"]["service"].is_null() {
                continue;
            }
            let conditions = service["status"]["conditions"].as_array();
            let current = conditions
                .into_iter()
                .flatten()
                .find(|c| c["type"] == "Available");
            let mut wanted = local_available(&now());
            if let Some(current) = current {
                if current["status"] == "True"
                    && current["reason"] == "Local"
                    && current["message"] == wanted["message"]
                {
                    continue;
                }
                if current["status"] == "True" {
                    wanted["lastTransitionTime"] = current["lastTransitionTime"].clone();
                }
            }
            let mut all: Vec<Value> = conditions
                .into_iter()
                .flatten()
                .filter(|c| c["type"] != "Available")
                .cloned()
                .collect();
            all.push(wanted);
            let patch = json!({"status": {"conditions": all}});
            if let Err(e) = client
                .merge_patch_status(&apiservices(), None, name, &patch)
                .await
            {
                tracing::warn!(apiservice = %name, error = %e, "could not mark available");
            }
        }
    }
}
