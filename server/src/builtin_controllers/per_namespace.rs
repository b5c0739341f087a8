//! The shape the service account and root CA controllers share: one named
//! object kept in every namespace, re-created when deleted. Each watches the
//! namespaces and the objects of that name in all namespaces, and syncs a
//! namespace whenever either changes.

use std::collections::HashMap;

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::{is_terminating, namespaces};
use crate::controllers::client::{Client, ClientError, ListParams, Resource};
use crate::controllers::informer::{self, Event, Source};
use crate::controllers::queue::WorkQueue;

/// The cause a create in a terminating namespace fails with.
const NAMESPACE_TERMINATING: &str = "NamespaceTerminating";

/// One object a controller keeps in every namespace.
pub trait Kept: Send + 'static {
    /// The controller's name, for logs.
    fn controller(&self) -> &'static str;
    /// The object's resource.
    fn resource(&self) -> Resource;
    /// The object's name.
    fn name(&self) -> &'static str;
    /// The object to create in `namespace`.
    fn desired(&self, namespace: &str) -> Value;
    /// The object with what drifted put back, or `None` when it is as wanted.
    fn repaired(&self, current: &Value) -> Option<Value>;
}

#[derive(Clone, Copy)]
enum From {
    Namespaces,
    Objects,
}

/// Runs the controller for `kept` until aborted.
pub async fn run(client: Client, kept: impl Kept) {
    let mut tasks = JoinSet::new();
    let (tx, mut rx) = mpsc::channel(256);
    informer::spawn(
        &mut tasks,
        client.clone(),
        Source::all(namespaces()),
        From::Namespaces,
        tx.clone(),
    );
    let objects = Source {
        resource: kept.resource(),
        namespace: None,
        params: ListParams {
            field_selector: Some(format!("metadata.name={}", kept.name())),
            ..ListParams::default()
        },
    };
    informer::spawn(&mut tasks, client.clone(), objects, From::Objects, tx);
    // Namespace name -> terminating.
    let mut known: HashMap<String, bool> = HashMap::new();
    let mut queue: WorkQueue<String> = WorkQueue::default();
    loop {
        while let Some(namespace) = queue.pop() {
            // Upstream's root CA publisher relies on the API refusing creates
            // in a terminating namespace; skipping them here as well keeps the
            // namespace controller from racing a re-created object.
            if known.get(&namespace).is_none_or(|terminating| *terminating) {
                queue.forget(&namespace);
                continue;
            }
            match sync(&client, &kept, &namespace).await {
                Ok(()) => queue.forget(&namespace),
                Err(e) => {
                    tracing::info!(controller = kept.controller(), %namespace, error = %e, "sync failed; retrying");
                    queue.retry(namespace);
                }
            }
            while let Ok(event) = rx.try_recv() {
                note(&mut known, &mut queue, event);
            }
        }
        tokio::select! {
            event = rx.recv() => match event {
                Some(event) => note(&mut known, &mut queue, event),
                None => return,
            },
            () = queue.wait_due() => {}
        }
    }
}

fn note(known: &mut HashMap<String, bool>, queue: &mut WorkQueue<String>, event: (From, Event)) {
    match event {
        (From::Namespaces, Event::Listed(items)) => {
            known.clear();
            for ns in &items {
                if let Some(name) = ns["metadata"]["name"].as_str() {
                    known.insert(name.to_owned(), is_terminating(ns));
                    queue.add(name.to_owned());
                }
            }
        }
        (From::Namespaces, Event::Applied(ns)) => {
            if let Some(name) = ns["metadata"]["name"].as_str() {
                known.insert(name.to_owned(), is_terminating(&ns));
                queue.add(name.to_owned());
            }
        }
        (From::Namespaces, Event::Deleted(ns)) => {
            if let Some(name) = ns["metadata"]["name"].as_str() {
                known.remove(name);
            }
        }
        (From::Objects, Event::Listed(_)) => {
            for name in known.keys() {
                queue.add(name.clone());
            }
        }
        (From::Objects, Event::Applied(object) | Event::Deleted(object)) => {
            if let Some(namespace) = object["metadata"]["namespace"].as_str() {
                queue.add(namespace.to_owned());
            }
        }
    }
}

/// Creates the object when missing, repairs it when it drifted.
async fn sync(client: &Client, kept: &impl Kept, namespace: &str) -> Result<(), ClientError> {
    let resource = kept.resource();
    match client.read(&resource, Some(namespace), kept.name()).await {
        Ok(current) => match kept.repaired(&current) {
            Some(repaired) => client
                .update(&resource, Some(namespace), kept.name(), None, &repaired)
                .await
                .map(drop),
            None => Ok(()),
        },
        Err(e) if e.is_not_found() => {
            match client
                .create(&resource, Some(namespace), &kept.desired(namespace))
                .await
            {
                Ok(_) => {
                    tracing::debug!(controller = kept.controller(), %namespace, "created {}", kept.name());
                    Ok(())
                }
                // Gone or terminating namespaces, and a create that lost a race.
                Err(e)
                    if e.is_not_found()
                        || e.is_conflict()
                        || e.has_cause(NAMESPACE_TERMINATING) =>
                {
                    Ok(())
                }
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}
