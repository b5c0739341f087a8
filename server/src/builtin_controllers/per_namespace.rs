//! The shape the service account and root CA controllers share: one named
//! object kept in every namespace, re-created when deleted. Each watches the
//! namespaces and the objects of that name in all namespaces, and syncs a
//! namespace whenever either changes.

use std::collections::HashMap;

use kapi_api_types::core::v1::Namespace;
use kapi_runtime::Resource as Kind;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::is_terminating;
use crate::controllers::client::{Client, ClientError, ListParams, Resource, typed};
use crate::controllers::informer::{self, Event, Source};
use crate::controllers::queue::WorkQueue;

/// The cause a create in a terminating namespace fails with.
const NAMESPACE_TERMINATING: &str = "NamespaceTerminating";

/// One object a controller keeps in every namespace.
pub trait Kept: Send + 'static {
    /// The object's kind.
    type Object: Kind + Send + 'static;
    /// The controller's name, for logs.
    fn controller(&self) -> &'static str;
    /// The object's name.
    fn name(&self) -> &'static str;
    /// The object to create in `namespace`.
    fn desired(&self, namespace: &str) -> Self::Object;
    /// The object with what drifted put back, or `None` when it is as wanted.
    fn repaired(&self, current: &Self::Object) -> Option<Self::Object>;
}

/// Runs the controller for `kept` until aborted.
pub async fn run<K: Kept>(client: Client, kept: K) {
    let mut tasks = JoinSet::new();
    let (namespaces_tx, mut namespaces_rx) = mpsc::channel::<((), Event<Namespace>)>(256);
    informer::spawn(
        &mut tasks,
        client.clone(),
        Source::all(Resource::of::<Namespace>()),
        (),
        namespaces_tx,
    );
    let (objects_tx, mut objects_rx) = mpsc::channel::<((), Event<K::Object>)>(256);
    let objects = Source {
        resource: Resource::of::<K::Object>(),
        namespace: None,
        params: ListParams {
            field_selector: Some(format!("metadata.name={}", kept.name())),
            ..ListParams::default()
        },
    };
    informer::spawn(&mut tasks, client.clone(), objects, (), objects_tx);
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
            while let Ok(((), event)) = namespaces_rx.try_recv() {
                note_namespaces(&mut known, &mut queue, event);
            }
            while let Ok(((), event)) = objects_rx.try_recv() {
                note_objects(&known, &mut queue, event);
            }
        }
        tokio::select! {
            event = namespaces_rx.recv() => match event {
                Some(((), event)) => note_namespaces(&mut known, &mut queue, event),
                None => return,
            },
            event = objects_rx.recv() => match event {
                Some(((), event)) => note_objects(&known, &mut queue, event),
                None => return,
            },
            () = queue.wait_due() => {}
        }
    }
}

fn note_namespaces(
    known: &mut HashMap<String, bool>,
    queue: &mut WorkQueue<String>,
    event: Event<Namespace>,
) {
    match event {
        Event::Listed(items) => {
            known.clear();
            for ns in &items {
                if let Some(name) = &ns.metadata.name {
                    known.insert(name.clone(), is_terminating(ns));
                    queue.add(name.clone());
                }
            }
        }
        Event::Applied(ns) => {
            if let Some(name) = &ns.metadata.name {
                known.insert(name.clone(), is_terminating(&ns));
                queue.add(name.clone());
            }
        }
        Event::Deleted(ns) => {
            if let Some(name) = &ns.metadata.name {
                known.remove(name);
            }
        }
    }
}

fn note_objects<O: Kind>(
    known: &HashMap<String, bool>,
    queue: &mut WorkQueue<String>,
    event: Event<O>,
) {
    match event {
        Event::Listed(_) => {
            for name in known.keys() {
                queue.add(name.clone());
            }
        }
        Event::Applied(object) | Event::Deleted(object) => {
            if let Some(namespace) = &object.metadata().namespace {
                queue.add(namespace.clone());
            }
        }
    }
}

/// Creates the object when missing, repairs it when it drifted.
async fn sync<K: Kept>(client: &Client, kept: &K, namespace: &str) -> Result<(), ClientError> {
    let resource = Resource::of::<K::Object>();
    match client.read(&resource, Some(namespace), kept.name()).await {
        Ok(current) => match kept.repaired(&typed::decode(current)?) {
            Some(repaired) => client
                .update_typed(Some(namespace), kept.name(), None, &repaired)
                .await
                .map(drop),
            None => Ok(()),
        },
        Err(e) if e.is_not_found() => {
            match client
                .create_typed(Some(namespace), &kept.desired(namespace))
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
