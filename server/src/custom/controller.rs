//! What kube-apiserver's apiextensions controllers do for a
//! CustomResourceDefinition, in one task every kapi process runs (each
//! replica serves the kinds it reads from the store, as each kube-apiserver
//! does):
//!
//! - naming: the names a definition asks for are accepted unless another
//!   definition of the group holds them (`status.acceptedNames`, condition
//!   `NamesAccepted` with upstream's reasons);
//! - establishing: a definition whose names were accepted is `Established`;
//! - serving: every established definition's served versions are entries of
//!   the scheme the registry serves, replaced as definitions change;
//! - finalizing: a definition being deleted has its custom objects deleted
//!   (condition `Terminating`), then its `customresourcecleanup` finalizer
//!   removed, and goes.
//!
//! Reads and writes go through the server's own router, as any client's.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kapi_runtime::meta::Time;
use kapi_runtime::scheme::{KindEntry, Scheme};
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::controllers::client::{Client, ListParams, Resource};
use crate::controllers::informer::{self, Event, Source};
use crate::post_start::Handle;
use crate::registry::Registry;

/// The finalizer a definition being deleted carries until its objects are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// How often a definition being deleted is checked for remaining objects.
const CLEANUP_POLL: Duration = Duration::from_secs(1);

/// How long objects may take to go before the controller reports that it
/// could not confirm they are gone (and starts over), as upstream's finalizer
/// does after a minute.
const CLEANUP_PATIENCE: Duration = Duration::from_secs(60);

/// The CustomResourceDefinitions, as a client addresses them.
pub fn crds() -> Resource {
    Resource::new(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        false,
    )
}

/// Runs until `shutdown`: keeps `registry` serving `base` plus the kinds of
/// every established CustomResourceDefinition.
pub async fn run(
    registry: Registry,
    base: Arc<Scheme>,
    client: Client,
    ready: Ready,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut tasks = JoinSet::new();
    let (tx, mut rx) = mpsc::channel(64);
    informer::spawn(&mut tasks, client.clone(), Source::all(crds()), (), tx);
    let mut known: BTreeMap<String, Value> = BTreeMap::new();
    // When each definition being deleted began its current round of
    // deleting objects.
    let mut rounds: BTreeMap<String, Instant> = BTreeMap::new();
    let mut poll = tokio::time::interval(CLEANUP_POLL);
    let mut built = Built::new();
    loop {
        tokio::select! {
            _ = shutdown.changed() => break,
            event = rx.recv() => {
                let Some(((), event)) = event else { break };
                apply(&mut known, event);
                // Take whatever else arrived before acting on it all.
                while let Ok(((), event)) = rx.try_recv() {
                    apply(&mut known, event);
                }
                ready.informers.done();
                serve(&registry, &client, &base, &known, &mut built);
                ready.controllers.done();
                accept_names(&client, &known).await;
                ready.synced.done();
            }
            _ = poll.tick() => {
                rounds.retain(|name, _| known.get(name).is_some_and(terminating));
                if known.values().any(terminating) {
                    finalize(&registry, &client, &known, &mut rounds).await;
                }
            }
        }
    }
    tasks.abort_all();
}

/// The post-start hooks the controller reports to.
pub struct Ready {
    /// `start-apiextensions-informers`: the definitions listed.
    pub informers: Handle,
    /// `start-apiextensions-controllers`: the definitions served once.
    pub controllers: Handle,
    /// `crd-informer-synced`: every definition there at start served and
    /// its names accepted.
    pub synced: Handle,
}

fn apply(known: &mut BTreeMap<String, Value>, event: Event) {
    let name = |crd: &Value| {
        crd["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    match event {
        Event::Listed(all) => *known = all.into_iter().map(|crd| (name(&crd), crd)).collect(),
        Event::Applied(crd) => {
            known.insert(name(&crd), crd);
        }
        Event::Deleted(crd) => {
            known.remove(&name(&crd));
        }
    }
}

fn condition<'a>(crd: &'a Value, type_: &str) -> Option<&'a Value> {
    crd["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

fn is_true(crd: &Value, type_: &str) -> bool {
    condition(crd, type_).is_some_and(|c| c["status"] == "True")
}

fn terminating(crd: &Value) -> bool {
    crd["metadata"]["deletionTimestamp"].is_string()
}

/// The entries made of each definition, by name, with what they were made
/// of: a definition whose spec, accepted names and deletion did not change
/// keeps its entries, so that what the server keeps per kind (its watch
/// cache) lives as long as the kind does, not until any definition's next
/// status update.
struct Built(BTreeMap<String, (Value, Vec<KindEntry>)>);

impl Built {
    fn new() -> Built {
        Built(BTreeMap::new())
    }

    /// The entries of `crd`, made again only when it changed.
    fn entries(
        &mut self,
        name: &str,
        crd: &Value,
        client: &Client,
    ) -> Result<Vec<KindEntry>, String> {
        let made_of = json!({
            "spec": crd["spec"],
            "acceptedNames": crd["status"]["acceptedNames"],
            "terminating": terminating(crd),
        });
        if let Some((was, entries)) = self.0.get(name)
            && *was == made_of
        {
            return Ok(entries.clone());
        }
        let entries = super::kind::entries(crd, Some(client))?;
        self.0.insert(name.to_owned(), (made_of, entries.clone()));
        Ok(entries)
    }
}

/// Serves `base` and the served versions of every established definition
/// (a definition naming a compiled kind's resource does not replace it).
fn serve(
    registry: &Registry,
    client: &Client,
    base: &Arc<Scheme>,
    known: &BTreeMap<String, Value>,
    built: &mut Built,
) {
    let mut scheme = Scheme::clone(base);
    built.0.retain(|name, _| known.contains_key(name));
    for (name, crd) in known.iter().filter(|(_, crd)| is_true(crd, "Established")) {
        match built.entries(name, crd, client) {
            Ok(entries) => {
                for entry in entries {
                    let info = entry.info;
                    if base.get(info.group, info.version, info.plural).is_none() {
                        scheme.add(entry);
                    }
                }
            }
            Err(e) => {
                tracing::warn!(crd = name, error = %e, "not serving custom resource");
            }
        }
    }
    registry.set_scheme(Arc::new(scheme));
}

/// The names of the group's other definitions: resource names (plural,
/// singular, short names) and kind names (kind, list kind).
fn names_in_use<'a>(
    known: &'a BTreeMap<String, Value>,
    crd: &Value,
) -> (Vec<&'a str>, Vec<&'a str>) {
    let (mut resources, mut kinds) = (Vec::new(), Vec::new());
    let group = &crd["spec"]["group"];
    let name = &crd["metadata"]["name"];
    for other in known.values() {
        if other["spec"]["group"] != *group || other["metadata"]["name"] == *name {
            continue;
        }
        let accepted = &other["status"]["acceptedNames"];
        for key in ["plural", "singular"] {
            resources.extend(accepted[key].as_str().filter(|s| !s.is_empty()));
        }
        for short in accepted["shortNames"].as_array().into_iter().flatten() {
            resources.extend(short.as_str());
        }
        for key in ["kind", "listKind"] {
            kinds.extend(accepted[key].as_str().filter(|s| !s.is_empty()));
        }
    }
    (resources, kinds)
}

/// The accepted names of `crd` and the conflict that kept one of its names
/// from being accepted (the last one found, as upstream reports it).
fn accepted_names(
    known: &BTreeMap<String, Value>,
    crd: &Value,
) -> (Map<String, Value>, Option<(&'static str, String)>) {
    let (resources, kinds) = names_in_use(known, crd);
    let requested = &crd["spec"]["names"];
    let mut accepted = crd["status"]["acceptedNames"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut conflict = None;
    let in_use = |s: &str| format!("{s:?} is already in use");
    for (key, reason, taken) in [
        ("plural", "PluralConflict", &resources),
        ("singular", "SingularConflict", &resources),
    ] {
        let wanted = requested[key].as_str().unwrap_or_default();
        if !wanted.is_empty() && taken.contains(&wanted) {
            conflict = Some((reason, in_use(wanted)));
        } else {
            accepted.insert(key.into(), requested[key].clone());
        }
    }
    let shorts: Vec<&str> = requested["shortNames"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    match shorts.iter().find(|s| resources.contains(s)) {
        Some(short) => conflict = Some(("ShortNamesConflict", in_use(short))),
        None => {
            accepted.insert("shortNames".into(), requested["shortNames"].clone());
        }
    }
    for (key, reason) in [("kind", "KindConflict"), ("listKind", "ListKindConflict")] {
        let wanted = requested[key].as_str().unwrap_or_default();
        if !wanted.is_empty() && kinds.contains(&wanted) {
            conflict = Some((reason, in_use(wanted)));
        } else {
            accepted.insert(key.into(), requested[key].clone());
        }
    }
    accepted.insert("categories".into(), requested["categories"].clone());
    accepted.retain(|_, v| !v.is_null());
    (accepted, conflict)
}

/// `conditions` with `type_` set to `status`, `reason` and `message`; its
/// transition time changes only when its status does.
fn set_condition(
    conditions: &mut Vec<Value>,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
) {
    let now = serde_json::to_value(Time::now()).unwrap_or(Value::Null);
    let found = conditions.iter_mut().find(|c| c["type"] == type_);
    match found {
        Some(c) => {
            if c["status"] != status {
                c["lastTransitionTime"] = now;
            }
            c["status"] = json!(status);
            c["reason"] = json!(reason);
            c["message"] = json!(message);
        }
        None => conditions.push(json!({
            "type": type_,
            "status": status,
            "lastTransitionTime": now,
            "reason": reason,
            "message": message,
        })),
    }
}

/// Accepts the names of each definition whose status does not say so yet,
/// and establishes it.
async fn accept_names(client: &Client, known: &BTreeMap<String, Value>) {
    for crd in known.values() {
        if terminating(crd) {
            continue;
        }
        let (accepted, conflict) = accepted_names(known, crd);
        let mut conditions: Vec<Value> = crd["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        match &conflict {
            None => set_condition(
                &mut conditions,
                "NamesAccepted",
                "True",
                "NoConflicts",
                "no conflicts found",
            ),
            Some((reason, message)) => {
                set_condition(&mut conditions, "NamesAccepted", "False", reason, message)
            }
        }
        let established = is_true(crd, "Established");
        if conflict.is_none() && !established {
            set_condition(
                &mut conditions,
                "Established",
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
            );
        } else if conflict.is_some() && !established {
            set_condition(
                &mut conditions,
                "Established",
                "False",
                "NotAccepted",
                "not all names are accepted",
            );
        }
        let status = &crd["status"];
        if status["acceptedNames"] == Value::Object(accepted.clone())
            && status["conditions"] == Value::Array(conditions.clone())
        {
            continue;
        }
        let mut updated = crd.clone();
        updated["status"]["acceptedNames"] = Value::Object(accepted);
        updated["status"]["conditions"] = Value::Array(conditions);
        write_status(client, &updated).await;
    }
}

/// Writes `crd`'s status with condition Terminating True for `reason`.
async fn write_terminating(client: &Client, crd: &Value, reason: &str, message: &str) {
    let mut conditions: Vec<Value> = crd["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    set_condition(&mut conditions, "Terminating", "True", reason, message);
    let mut updated = crd.clone();
    updated["status"]["conditions"] = Value::Array(conditions);
    write_status(client, &updated).await;
}

async fn write_status(client: &Client, crd: &Value) {
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    if let Err(e) = client
        .update(&crds(), None, name, Some("status"), crd)
        .await
    {
        // A conflict means a newer definition is on its way to the informer.
        if !e.is_conflict() && !e.is_not_found() {
            tracing::warn!(crd = name, error = %e, "writing the definition's status");
        }
    }
}

/// For each definition being deleted: deletes its objects, and when none
/// is left, removes its cleanup finalizer (the definition then goes).
async fn finalize(
    registry: &Registry,
    client: &Client,
    known: &BTreeMap<String, Value>,
    rounds: &mut BTreeMap<String, Instant>,
) {
    for crd in known.values().filter(|crd| terminating(crd)) {
        let holds = crd["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f == CLEANUP_FINALIZER));
        if !holds {
            continue;
        }
        let name = crd["metadata"]["name"].as_str().unwrap_or_default();
        let reason = condition(crd, "Terminating").map(|c| c["reason"].clone());
        if reason != Some(json!("InstanceDeletionInProgress")) {
            write_terminating(
                client,
                crd,
                "InstanceDeletionInProgress",
                "CustomResource deletion is in progress",
            )
            .await;
        }
        match delete_objects(registry, client, crd).await {
            Ok(true) => {
                let mut updated = crd.clone();
                if let Some(finalizers) = updated["metadata"]["finalizers"].as_array_mut() {
                    finalizers.retain(|f| f != CLEANUP_FINALIZER);
                }
                if let Err(e) = client.update(&crds(), None, name, None, &updated).await
                    && !e.is_conflict()
                    && !e.is_not_found()
                {
                    tracing::warn!(crd = name, error = %e, "removing the cleanup finalizer");
                }
            }
            Ok(false) => {
                let started = *rounds.entry(name.to_owned()).or_insert_with(Instant::now);
                if started.elapsed() >= CLEANUP_PATIENCE {
                    // Upstream's words when its wait for the objects times
                    // out; the next round starts at once.
                    rounds.remove(name);
                    write_terminating(
                        client,
                        crd,
                        "InstanceDeletionCheck",
                        "could not confirm zero CustomResources remaining: timed out waiting for the condition",
                    )
                    .await;
                }
            }
            Err(e) => tracing::warn!(crd = name, error = %e, "deleting custom objects"),
        }
    }
}

/// Deletes every object of the definition; whether none is left.
async fn delete_objects(
    registry: &Registry,
    client: &Client,
    crd: &Value,
) -> Result<bool, crate::controllers::client::ClientError> {
    let group = crd["spec"]["group"].as_str().unwrap_or_default();
    let plural = crd["status"]["acceptedNames"]["plural"]
        .as_str()
        .unwrap_or_default();
    let scheme = registry.scheme();
    // Any served version lists every object (they are stored in one).
    let Some(entry) = scheme
        .entries()
        .find(|e| e.info.group == group && e.info.plural == plural)
    else {
        return Ok(true);
    };
    let info = entry.info;
    let resource = Resource::new(info.group, info.version, info.plural, info.namespaced);
    let list = client.list(&resource, None, &ListParams::default()).await?;
    let items = list["items"].as_array().cloned().unwrap_or_default();
    if items.is_empty() {
        return Ok(true);
    }
    for item in &items {
        let meta = &item["metadata"];
        if meta["deletionTimestamp"].is_string() {
            continue;
        }
        let name = meta["name"].as_str().unwrap_or_default();
        let namespace = meta["namespace"].as_str();
        if let Err(e) = client.delete(&resource, namespace, name, &json!({})).await
            && !e.is_not_found()
        {
            return Err(e);
        }
    }
    Ok(false)
}
