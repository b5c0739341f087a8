//! The namespace controller: a namespace being deleted (`deletionTimestamp`,
//! phase Terminating) is emptied through the API, then finalized and removed,
//! as upstream's namespace-controller (`namespaced_resources_deleter.go`):
//!
//! 1. the phase becomes Terminating (status);
//! 2. every namespaced resource in discovery that supports delete is emptied
//!    (deletecollection, else one delete per object, propagation Background);
//! 3. while objects remain (finalizers, graceful deletion) the namespace is
//!    looked at again later; the deletion conditions say what is left;
//! 4. `kubernetes` leaves `spec.finalizers` through `namespaces/<name>/finalize`;
//! 5. the namespace is deleted again with a UID precondition, which removes it
//!    once no finalizer is left.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use kapi_api_types::core::v1::Namespace;
use kapi_runtime::meta::ObjectMeta;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

mod conditions;

use super::{is_terminating, namespaces};
use crate::controllers::client::{Client, ClientError, ListParams, Resource};
use crate::controllers::discovery::preferred_resources;
use crate::controllers::informer::{self, Event, Source};
use crate::controllers::queue::WorkQueue;

/// The finalizer this controller removes.
const KUBERNETES_FINALIZER: &str = "kubernetes";

/// How soon a namespace with content left is looked at again.
const CONTENT_RECHECK: Duration = Duration::from_secs(2);

/// What one sync ended with.
enum Outcome {
    /// Nothing more to do (removed, or not being deleted).
    Done,
    /// Content remains: look again later.
    ContentRemaining,
}

/// Runs the controller until aborted.
pub async fn run(client: Client) {
    let mut tasks = JoinSet::new();
    let (tx, mut rx) = mpsc::channel::<((), Event<Namespace>)>(256);
    informer::spawn(
        &mut tasks,
        client.clone(),
        Source::all(namespaces()),
        (),
        tx,
    );
    let mut queue: WorkQueue<String> = WorkQueue::default();
    loop {
        while let Some(name) = queue.pop() {
            match sync(&client, &name).await {
                Ok(Outcome::Done) => queue.forget(&name),
                Ok(Outcome::ContentRemaining) => queue.add_after(name, CONTENT_RECHECK),
                Err(e) => {
                    tracing::info!(namespace = %name, error = %e, "namespace deletion failed; retrying");
                    queue.retry(name);
                }
            }
            while let Ok(((), event)) = rx.try_recv() {
                note(&mut queue, event);
            }
        }
        tokio::select! {
            event = rx.recv() => match event {
                Some(((), event)) => note(&mut queue, event),
                None => return,
            },
            () = queue.wait_due() => {}
        }
    }
}

fn note(queue: &mut WorkQueue<String>, event: Event<Namespace>) {
    let mut add = |ns: &Namespace| {
        if is_terminating(ns)
            && let Some(name) = &ns.metadata.name
        {
            queue.add(name.clone());
        }
    };
    match event {
        Event::Listed(items) => items.iter().for_each(add),
        Event::Applied(ns) => add(&ns),
        Event::Deleted(_) => {}
    }
}

/// Why a sync failed.
#[derive(Debug, thiserror::Error)]
enum SyncError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("{0}")]
    Content(String),
}

async fn sync(client: &Client, name: &str) -> Result<Outcome, SyncError> {
    let namespace = match client.get_typed::<Namespace>(None, name).await {
        Ok(ns) => ns,
        Err(e) if e.is_not_found() => return Ok(Outcome::Done),
        Err(e) => return Err(e.into()),
    };
    if namespace.metadata.deletion_timestamp.is_none() {
        return Ok(Outcome::Done);
    }
    let namespace = mark_terminating(client, namespace).await?;
    if finalized(&namespace) {
        delete_namespace(client, &namespace).await?;
        return Ok(Outcome::Done);
    }
    let report = delete_content(client, name).await?;
    conditions::update(client, namespace.clone(), &report).await?;
    if !report.errors.is_empty() {
        return Err(SyncError::Content(report.errors.join(", ")));
    }
    if !report.remaining.is_empty() {
        return Ok(Outcome::ContentRemaining);
    }
    let namespace = finalize(client, namespace).await?;
    if finalized(&namespace) {
        delete_namespace(client, &namespace).await?;
    }
    Ok(Outcome::Done)
}

fn finalized(namespace: &Namespace) -> bool {
    namespace.spec.finalizers.as_ref().is_none_or(Vec::is_empty)
}

fn name_of(namespace: &Namespace) -> String {
    namespace.metadata.name.clone().unwrap_or_default()
}

/// Sets the phase Terminating when it is not yet.
async fn mark_terminating(
    client: &Client,
    mut namespace: Namespace,
) -> Result<Namespace, ClientError> {
    if namespace.status.phase.as_deref() == Some("Terminating") {
        return Ok(namespace);
    }
    namespace.status.phase = Some("Terminating".to_owned());
    let name = name_of(&namespace);
    client
        .update_typed(None, &name, Some("status"), &namespace)
        .await
}

/// What emptying a namespace found.
#[derive(Default)]
pub(super) struct ContentReport {
    /// Discovery failures (`NamespaceDeletionDiscoveryFailure`).
    pub(super) discovery: Option<String>,
    /// Deletes that failed (`NamespaceDeletionContentFailure`).
    pub(super) errors: Vec<String>,
    /// `resource.group` -> objects left (`NamespaceContentRemaining`).
    pub(super) remaining: BTreeMap<String, usize>,
    /// finalizer -> objects holding it (`NamespaceFinalizersRemaining`).
    pub(super) finalizers: BTreeMap<String, usize>,
}

async fn delete_content(client: &Client, namespace: &str) -> Result<ContentReport, ClientError> {
    let (resources, failures) = preferred_resources(client).await?;
    let mut report = ContentReport::default();
    if !failures.is_empty() {
        // client-go's ErrGroupDiscoveryFailed, group versions sorted.
        let mut groups: Vec<String> = failures
            .iter()
            .map(|f| format!("{}: {}", f.group_version, f.error))
            .collect();
        groups.sort();
        report.discovery = Some(format!(
            "Discovery failed for some groups, {} failing: unable to retrieve the complete list of server APIs: {}",
            failures.len(),
            groups.join(", ")
        ));
    }
    let mut seen = HashSet::new();
    for found in resources {
        let resource = &found.resource;
        if !resource.namespaced || !found.supports(&["delete"]) {
            continue;
        }
        if !seen.insert((resource.group.clone(), resource.plural.clone())) {
            continue;
        }
        if let Err(e) = empty(
            client,
            resource,
            namespace,
            found.supports(&["deletecollection"]),
        )
        .await
        {
            report
                .errors
                .push(format!("{}.{}: {e}", resource.plural, resource.group));
        }
        if !found.supports(&["list"]) {
            continue;
        }
        let left = client
            .list(resource, Some(namespace), &metadata_only())
            .await;
        match left {
            Ok(list) => count_left(&mut report, resource, &list),
            Err(e) => report
                .errors
                .push(format!("{}.{}: {e}", resource.plural, resource.group)),
        }
    }
    Ok(report)
}

fn metadata_only() -> ListParams {
    ListParams {
        metadata_only: true,
        ..ListParams::default()
    }
}

/// Deletes everything of `resource` in `namespace`.
async fn empty(
    client: &Client,
    resource: &Resource,
    namespace: &str,
    collection: bool,
) -> Result<(), ClientError> {
    let options = json!({
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "propagationPolicy": "Background",
    });
    if collection {
        match client
            .delete_collection(resource, Some(namespace), &options)
            .await
        {
            Ok(_) => return Ok(()),
            // Not allowed after all: one by one, as upstream falls back.
            Err(e) if e.code() == Some(405) => {}
            Err(e) => return Err(e),
        }
    }
    let list = client
        .list(resource, Some(namespace), &metadata_only())
        .await?;
    for meta in metadata_of(&list) {
        let Some(name) = meta.name.as_deref() else {
            continue;
        };
        match client
            .delete(resource, Some(namespace), name, &options)
            .await
        {
            Ok(_) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The metadata of a metadata-only list's items (of any resource: the one
/// part every object has, read typed).
fn metadata_of(list: &Value) -> Vec<ObjectMeta> {
    let items = list["items"].as_array().map_or(&[][..], Vec::as_slice);
    items
        .iter()
        .filter_map(|item| ObjectMeta::deserialize(&item["metadata"]).ok())
        .collect()
}

fn count_left(report: &mut ContentReport, resource: &Resource, list: &Value) {
    let items = metadata_of(list);
    if items.is_empty() {
        return;
    }
    let key = format!("{}.{}", resource.plural, resource.group);
    *report.remaining.entry(key).or_default() += items.len();
    for meta in &items {
        for finalizer in meta.finalizers() {
            *report.finalizers.entry(finalizer.clone()).or_default() += 1;
        }
    }
}

/// Removes `kubernetes` from `spec.finalizers` through the finalize subresource,
/// reading the namespace again when the write lost a race.
async fn finalize(client: &Client, mut namespace: Namespace) -> Result<Namespace, ClientError> {
    let name = name_of(&namespace);
    for _ in 0..3 {
        let finalizers = namespace.spec.finalizers.get_or_insert_with(Vec::new);
        finalizers.retain(|f| f != KUBERNETES_FINALIZER);
        match client
            .update_typed(None, &name, Some("finalize"), &namespace)
            .await
        {
            Ok(updated) => return Ok(updated),
            Err(e) if e.is_conflict() => namespace = client.get_typed(None, &name).await?,
            Err(e) => return Err(e),
        }
    }
    client.get_typed(None, &name).await
}

/// Deletes the namespace once more, for this very namespace (UID precondition).
async fn delete_namespace(client: &Client, namespace: &Namespace) -> Result<(), ClientError> {
    let name = name_of(namespace);
    let options = json!({
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "preconditions": { "uid": namespace.metadata.uid },
    });
    match client.delete(&namespaces(), None, &name, &options).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(e),
    }
}
