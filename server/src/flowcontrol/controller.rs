//! What kube-apiserver's priority-and-fairness controllers do, in one task:
//!
//! - the consumer: watches FlowSchemas and PriorityLevelConfigurations,
//!   hands every change to the filter's configuration, and writes each
//!   FlowSchema's `Dangling` condition (server-side apply of the status, as
//!   `api-priority-and-fairness-config-consumer-v1`);
//! - the producer: keeps the bootstrap objects (created when missing, their
//!   spec reset where `apf.kubernetes.io/autoupdate-spec` says so, former
//!   bootstrap objects that still say so removed), at start and every
//!   minute, as `api-priority-and-fairness-config-producer-v1`.
//!
//! Reads and writes go through the server's own router as kube-apiserver's
//! loopback client (`system:masters`: the exempt level).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::Method;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use super::FlowControl;
use super::bootstrap::{self, AUTOUPDATE, parse_bool};
use super::config::{EXEMPT, dangling_condition};
use crate::controllers::client::{Client, Resource};
use crate::controllers::informer::{self, Event, Source};
use crate::post_start::Handle;

const GROUP_VERSION: &str = "flowcontrol.apiserver.k8s.io/v1";
const PRODUCER: &str = "api-priority-and-fairness-config-producer-v1";
const CONSUMER: &str = "api-priority-and-fairness-config-consumer-v1";

/// How often the bootstrap objects are checked again.
const ENSURE_EVERY: Duration = Duration::from_secs(60);

/// How long the first configuration waits for the bootstrap objects it
/// created to come back through the informers.
const AWAIT_CREATED: Duration = Duration::from_secs(10);

/// Status writes of one FlowSchema allowed per minute before they wait.
const WRITES_PER_MINUTE: usize = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    FlowSchemas,
    PriorityLevels,
}

impl List {
    fn resource(self) -> Resource {
        let plural = match self {
            List::FlowSchemas => "flowschemas",
            List::PriorityLevels => "prioritylevelconfigurations",
        };
        Resource::new("flowcontrol.apiserver.k8s.io", "v1", plural, false)
    }

    fn kind(self) -> &'static str {
        match self {
            List::FlowSchemas => "FlowSchema",
            List::PriorityLevels => "PriorityLevelConfiguration",
        }
    }

    /// The name of its list in `bootstrap.json`.
    fn bootstrap(self) -> &'static str {
        match self {
            List::FlowSchemas => "flowSchemas",
            List::PriorityLevels => "priorityLevelConfigurations",
        }
    }
}

#[derive(Default)]
struct Known {
    flow_schemas: BTreeMap<String, Value>,
    priority_levels: BTreeMap<String, Value>,
    listed: (bool, bool),
}

impl Known {
    fn of(&mut self, list: List) -> &mut BTreeMap<String, Value> {
        match list {
            List::FlowSchemas => &mut self.flow_schemas,
            List::PriorityLevels => &mut self.priority_levels,
        }
    }

    fn apply(&mut self, list: List, event: Event) {
        let name = |o: &Value| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        };
        match event {
            Event::Listed(objects) => {
                match list {
                    List::FlowSchemas => self.listed.0 = true,
                    List::PriorityLevels => self.listed.1 = true,
                }
                *self.of(list) = objects.into_iter().map(|o| (name(&o), o)).collect();
            }
            Event::Applied(object) => {
                self.of(list).insert(name(&object), object);
            }
            Event::Deleted(object) => {
                self.of(list).remove(&name(&object));
            }
        }
    }

    fn has(&self, list: List, name: &str) -> bool {
        match list {
            List::FlowSchemas => self.flow_schemas.contains_key(name),
            List::PriorityLevels => self.priority_levels.contains_key(name),
        }
    }

    fn ready(&self) -> bool {
        self.listed.0 && self.listed.1
    }
}

/// Runs until `shutdown`.
/// `consumer` (`priority-and-fairness-config-consumer`) is done once the
/// configuration was first read, `producer`
/// (`priority-and-fairness-config-producer`) once the bootstrap objects
/// were first ensured.
pub async fn run(
    flow_control: Arc<FlowControl>,
    client: Client,
    (consumer, producer): (Option<Handle>, Option<Handle>),
    mut shutdown: watch::Receiver<bool>,
) {
    let mut tasks = JoinSet::new();
    let (tx, mut rx) = mpsc::channel(64);
    for list in [List::FlowSchemas, List::PriorityLevels] {
        informer::spawn(
            &mut tasks,
            client.clone(),
            Source::all(list.resource()),
            list,
            tx.clone(),
        );
    }
    drop(tx);
    let mut known = Known::default();
    let mut writes: BTreeMap<String, VecDeque<Instant>> = BTreeMap::new();
    let mut ensure = tokio::time::interval(ENSURE_EVERY);
    ensure.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The bootstrap objects the first round created and the informers have
    // not shown yet: until they arrive the configuration stays the bootstrap
    // one the filter began with, rather than the mandatory objects alone.
    let mut awaiting: Option<(Instant, Vec<(List, String)>)> = None;
    let mut ensured = false;
    loop {
        tokio::select! {
            _ = shutdown.changed() => break,
            event = rx.recv() => {
                let Some((list, event)) = event else { break };
                known.apply(list, event);
                while let Ok((list, event)) = rx.try_recv() {
                    known.apply(list, event);
                }
                if !known.ready() {
                    continue;
                }
                if let Some(consumer) = &consumer {
                    consumer.done();
                }
                if !ensured {
                    let created = ensure_bootstrap(&client, &known).await;
                    awaiting = Some((Instant::now(), created));
                    ensured = true;
                    if let Some(producer) = &producer {
                        producer.done();
                    }
                }
                if let Some((since, created)) = &mut awaiting {
                    created.retain(|(list, name)| !known.has(*list, name));
                    if !created.is_empty() && since.elapsed() < AWAIT_CREATED {
                        continue;
                    }
                    awaiting = None;
                }
                configure(&flow_control, &known);
                write_conditions(&client, &known, &mut writes).await;
            }
            _ = ensure.tick(), if ensured => {
                ensure_bootstrap(&client, &known).await;
            }
        }
    }
}

fn configure(flow_control: &FlowControl, known: &Known) {
    let fs: Vec<&Value> = known.flow_schemas.values().collect();
    let plc: Vec<&Value> = known.priority_levels.values().collect();
    flow_control.configure(&fs, &plc);
}

/// Writes the `Dangling` condition of every FlowSchema whose condition is
/// not what it should be.
async fn write_conditions(
    client: &Client,
    known: &Known,
    writes: &mut BTreeMap<String, VecDeque<Instant>>,
) {
    let levels: Vec<&str> = known.priority_levels.keys().map(String::as_str).collect();
    for (name, schema) in &known.flow_schemas {
        let (dangling, reason, message) = dangling_condition(schema, &levels);
        let status = if dangling { "True" } else { "False" };
        let current = schema["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Dangling"));
        if current.is_some_and(|c| {
            c["status"] == status && c["reason"] == reason && c["message"] == message.as_str()
        }) {
            continue;
        }
        let recent = writes.entry(name.clone()).or_default();
        recent.retain(|at| at.elapsed() < Duration::from_secs(60));
        if recent.len() >= WRITES_PER_MINUTE {
            continue;
        }
        recent.push_back(Instant::now());
        let now = kapi_runtime::meta::Time::now().to_string();
        let patch = json!({
            "apiVersion": GROUP_VERSION,
            "kind": "FlowSchema",
            "metadata": {"name": name},
            "status": {"conditions": [{
                "type": "Dangling",
                "status": status,
                "lastTransitionTime": now,
                "reason": reason,
                "message": message,
            }]},
        });
        let uri = format!(
            "{}/status?fieldManager={CONSUMER}&force=true",
            List::FlowSchemas.resource().path(None, Some(name))
        );
        if let Err(e) = client
            .request(
                Method::PATCH,
                &uri,
                "application/apply-patch+yaml",
                "application/json",
                Some(&patch),
            )
            .await
            && !e.is_not_found()
        {
            tracing::warn!(flow_schema = %name, error = %e, "could not write the Dangling condition");
        }
    }
}

/// The producer's round: suggested levels and schemas, then the mandatory
/// ones, then the removal of former bootstrap objects. Returns the objects
/// it created.
async fn ensure_bootstrap(client: &Client, known: &Known) -> Vec<(List, String)> {
    let mut created = Vec::new();
    for mandatory in [false, true] {
        for list in [List::PriorityLevels, List::FlowSchemas] {
            let existing = match list {
                List::FlowSchemas => &known.flow_schemas,
                List::PriorityLevels => &known.priority_levels,
            };
            for object in bootstrap::objects(list.bootstrap()) {
                if object.mandatory == mandatory
                    && ensure_one(client, list, &object, existing.get(&object.name)).await
                {
                    created.push((list, object.name.clone()));
                }
            }
        }
    }
    for list in [List::FlowSchemas, List::PriorityLevels] {
        let wanted: Vec<String> = bootstrap::objects(list.bootstrap())
            .into_iter()
            .map(|o| o.name)
            .collect();
        let existing = match list {
            List::FlowSchemas => &known.flow_schemas,
            List::PriorityLevels => &known.priority_levels,
        };
        for (name, object) in existing {
            let auto = object["metadata"]["annotations"][AUTOUPDATE]
                .as_str()
                .and_then(parse_bool);
            if wanted.contains(name) || auto != Some(true) {
                continue;
            }
            let uri = list.resource().path(None, Some(name));
            let options = json!({"kind": "DeleteOptions", "apiVersion": "v1"});
            match client
                .request(
                    Method::DELETE,
                    &uri,
                    "application/json",
                    "application/json",
                    Some(&options),
                )
                .await
            {
                Ok(_) => {
                    tracing::info!(kind = list.kind(), %name, "removed a former bootstrap object")
                }
                Err(e) if e.is_not_found() => {}
                Err(e) => tracing::warn!(kind = list.kind(), %name, error = %e, "could not remove"),
            }
        }
    }
    created
}

/// Creates `object` when missing (true when it did), or resets its spec and
/// annotation as the annotation (or, without one, its generation) says.
async fn ensure_one(
    client: &Client,
    list: List,
    object: &bootstrap::Object,
    current: Option<&Value>,
) -> bool {
    let resource = list.resource();
    let Some(current) = current else {
        let body = json!({
            "apiVersion": GROUP_VERSION,
            "kind": list.kind(),
            "metadata": {"name": object.name, "annotations": {AUTOUPDATE: "true"}},
            "spec": object.spec,
        });
        let uri = format!("{}?fieldManager={PRODUCER}", resource.path(None, None));
        return match client
            .request(
                Method::POST,
                &uri,
                "application/json",
                "application/json",
                Some(&body),
            )
            .await
        {
            Ok(_) => true,
            Err(e) if e.is_conflict() => false,
            Err(e) => {
                tracing::warn!(kind = list.kind(), name = %object.name, error = %e, "could not create");
                false
            }
        };
    };
    let annotation = current["metadata"]["annotations"][AUTOUPDATE].as_str();
    let auto = if object.mandatory {
        true
    } else {
        annotation
            .and_then(parse_bool)
            .unwrap_or_else(|| current["metadata"]["generation"].as_i64() == Some(1))
    };
    let update_annotation = annotation.and_then(parse_bool) != Some(auto);
    let mut wanted = object.spec.clone();
    if list == List::PriorityLevels && object.name == EXEMPT {
        // Operators may change the exempt level's shares and lendable percent.
        for field in ["nominalConcurrencyShares", "lendablePercent"] {
            let value = &current["spec"]["exempt"][field];
            if !value.is_null() {
                wanted["exempt"][field] = value.clone();
            }
        }
    }
    let spec_changed = auto && current["spec"] != wanted;
    if !update_annotation && !spec_changed {
        return false;
    }
    let mut updated = current.clone();
    if spec_changed {
        updated["spec"] = wanted;
    }
    updated["metadata"]["annotations"][AUTOUPDATE] = Value::String(auto.to_string());
    let uri = format!(
        "{}?fieldManager={PRODUCER}",
        resource.path(None, Some(&object.name))
    );
    match client
        .request(
            Method::PUT,
            &uri,
            "application/json",
            "application/json",
            Some(&updated),
        )
        .await
    {
        Ok(_) => {
            tracing::info!(kind = list.kind(), name = %object.name, spec_changed, "updated a bootstrap object")
        }
        Err(e) if e.is_conflict() || e.is_not_found() => {}
        Err(e) => {
            tracing::warn!(kind = list.kind(), name = %object.name, error = %e, "could not update")
        }
    }
    false
}
