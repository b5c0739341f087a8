//! The garbage collector: ownerReferences cascade as kube-controller-manager's
//! garbage-collector-controller does (`garbagecollector.go`, `graph_builder.go`).
//!
//! - Background: an object whose owners are all gone is deleted; references to
//!   absent owners are dropped when other owners remain.
//! - Foreground: the dependents of an owner being deleted with the
//!   `foregroundDeletion` finalizer are deleted; once none that blocks its
//!   deletion (`blockOwnerDeletion`) is left, the finalizer is removed.
//! - Orphan: an owner being deleted with the `orphan` finalizer is removed from
//!   its dependents' ownerReferences, then the finalizer is removed.
//!
//! Every resource that supports list, watch and delete is watched as metadata;
//! an owner's absence is always confirmed by a live GET before anything is
//! deleted, as upstream does.

mod graph;
mod writes;

use std::collections::{HashMap, HashSet};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::controllers::client::{Client, ClientError, ListParams};
use crate::controllers::discovery::{Discovered, preferred_resources};
use crate::controllers::informer::{self, Backoff, Event, Source};
use crate::controllers::queue::WorkQueue;
use graph::{FOREGROUND, Graph, Node, ORPHAN, OwnerRef, Partial};

/// Runs the collector until aborted.
pub async fn run(client: Client) {
    let mut backoff = Backoff::default();
    let resources = loop {
        match preferred_resources(&client).await {
            Ok((found, _)) => break deletable(found),
            Err(e) => {
                tracing::info!(error = %e, "garbage collector: discovery failed; retrying");
                backoff.wait().await;
            }
        }
    };
    let mut tasks = JoinSet::new();
    let (tx, mut rx) = mpsc::channel(1024);
    let mut collector = Collector {
        client,
        kinds: HashMap::new(),
        resources: Vec::new(),
        informers: Vec::new(),
        graph: Graph::default(),
        queue: WorkQueue::default(),
    };
    for found in resources {
        collector.watch(&mut tasks, &tx, found);
    }
    let mut synced = HashSet::new();
    let mut rediscover = tokio::time::interval(REDISCOVER);
    rediscover.tick().await;
    loop {
        // Nothing is decided before every resource was listed once: the
        // dependents of an owner must all be known before its finalizer goes.
        if synced.len() == collector.resources.len() {
            while let Some(uid) = collector.queue.pop() {
                match collector.process(&uid).await {
                    Ok(()) => collector.queue.forget(&uid),
                    Err(e) => {
                        tracing::info!(%uid, error = %e, "garbage collection failed; retrying");
                        collector.queue.retry(uid);
                    }
                }
                while let Ok(event) = rx.try_recv() {
                    collector.note(&mut synced, event);
                }
            }
        }
        tokio::select! {
            event = rx.recv() => match event {
                Some(event) => collector.note(&mut synced, event),
                None => return,
            },
            () = collector.queue.wait_due() => {}
            _ = rediscover.tick() => collector.rediscover(&mut tasks, &tx, &mut synced).await,
        }
    }
}

/// How often the collector looks for resources that came or went (custom
/// resources): upstream's looks every 30 s; discovery through the server's
/// own router is cheap, so kapi looks every 10 s.
const REDISCOVER: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether two discovered resources are the same group, version and plural.
fn same(a: &Discovered, b: &Discovered) -> bool {
    let (a, b) = (&a.resource, &b.resource);
    a.group == b.group && a.version == b.version && a.plural == b.plural
}

/// The resources the collector watches: list, watch and delete supported.
fn deletable(found: Vec<Discovered>) -> Vec<Discovered> {
    let mut seen = HashSet::new();
    found
        .into_iter()
        .filter(|d| d.supports(&["list", "watch", "delete"]))
        .filter(|d| seen.insert((d.resource.group.clone(), d.resource.plural.clone())))
        .collect()
}

struct Collector {
    client: Client,
    /// Every resource watched since the start, by index; those no longer
    /// served keep their index with their informer stopped.
    resources: Vec<Discovered>,
    /// The informer of each resource; `None` once it is no longer served.
    informers: Vec<Option<tokio::task::AbortHandle>>,
    /// (group, kind) -> index in `resources`.
    kinds: HashMap<(String, String), usize>,
    graph: Graph,
    queue: WorkQueue<String>,
}

impl Collector {
    /// Starts watching one more resource.
    fn watch(
        &mut self,
        tasks: &mut JoinSet<()>,
        tx: &mpsc::Sender<(usize, Event<Partial>)>,
        found: Discovered,
    ) {
        let i = self.resources.len();
        let source = Source {
            resource: found.resource.clone(),
            namespace: None,
            params: ListParams {
                metadata_only: true,
                ..ListParams::default()
            },
        };
        let handle = informer::spawn(tasks, self.client.clone(), source, i, tx.clone());
        self.kinds
            .insert((found.resource.group.clone(), found.kind.clone()), i);
        self.resources.push(found);
        self.informers.push(Some(handle));
    }

    /// Watches the resources discovery lists now and did not before (a new
    /// custom resource), and stops watching those no longer listed, whose
    /// objects then count as gone.
    async fn rediscover(
        &mut self,
        tasks: &mut JoinSet<()>,
        tx: &mpsc::Sender<(usize, Event<Partial>)>,
        synced: &mut HashSet<usize>,
    ) {
        let Ok((found, failures)) = preferred_resources(&self.client).await else {
            return;
        };
        let found = deletable(found);
        // A group that failed to answer is not taken as gone.
        let failed = |d: &Discovered| {
            failures
                .iter()
                .any(|f| f.group_version == d.resource.api_version())
        };
        for i in 0..self.resources.len() {
            let listed = found.iter().any(|f| same(f, &self.resources[i]));
            if listed || failed(&self.resources[i]) || self.informers[i].is_none() {
                continue;
            }
            if let Some(handle) = self.informers[i].take() {
                handle.abort();
            }
            synced.insert(i);
            for uid in self.graph.relisted(i, &HashSet::new()) {
                self.queue.add(uid);
            }
        }
        for f in found {
            let watched = self
                .resources
                .iter()
                .zip(&self.informers)
                .any(|(r, informer)| informer.is_some() && same(r, &f));
            if !watched {
                self.watch(tasks, tx, f);
            }
        }
    }

    fn note(&mut self, synced: &mut HashSet<usize>, (resource, event): (usize, Event<Partial>)) {
        let todo = match event {
            Event::Listed(items) => {
                synced.insert(resource);
                let mut uids = HashSet::new();
                let mut todo = Vec::new();
                for item in &items {
                    if let Some((uid, node)) = Node::of(resource, item) {
                        uids.insert(uid.clone());
                        todo.extend(self.graph.upsert(uid, node));
                    }
                }
                todo.extend(self.graph.relisted(resource, &uids));
                todo
            }
            Event::Applied(object) => match Node::of(resource, &object) {
                Some((uid, node)) => self.graph.upsert(uid, node),
                None => Vec::new(),
            },
            Event::Deleted(object) => match object.metadata.uid.as_deref() {
                Some(uid) => self.graph.remove(uid),
                None => Vec::new(),
            },
        };
        for uid in todo {
            self.queue.add(uid);
        }
    }

    async fn process(&mut self, uid: &str) -> Result<(), ClientError> {
        let Some(node) = self.graph.node(uid).cloned() else {
            return Ok(());
        };
        if node.deleting && node.orphan {
            return self.orphan_dependents(uid, &node).await;
        }
        if node.deleting_dependents() {
            return self.delete_dependents(uid, &node).await;
        }
        if node.deleting || node.owners.is_empty() {
            return Ok(());
        }
        self.attempt_to_delete(uid, &node).await
    }

    /// The live object of a node, if it is still the same object.
    async fn live(&self, uid: &str, node: &Node) -> Result<Option<Partial>, ClientError> {
        let Some(found) = self.resources.get(node.resource) else {
            return Ok(None);
        };
        match self
            .client
            .get(&found.resource, node.namespace.as_deref(), &node.name)
            .await
        {
            Ok(object) => {
                let object = partial(object)?;
                Ok((object.metadata.uid.as_deref() == Some(uid)).then_some(object))
            }
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Background collection of a dependent: deleted when no owner is left,
    /// references to absent owners dropped when some remain.
    async fn attempt_to_delete(&self, uid: &str, node: &Node) -> Result<(), ClientError> {
        let Some(latest) = self.live(uid, node).await? else {
            return Ok(());
        };
        let owners = OwnerRef::of(&latest.metadata);
        if owners.is_empty() {
            return Ok(());
        }
        let mut solid = Vec::new();
        let mut gone = Vec::new();
        let mut waiting = Vec::new();
        for owner in owners {
            match self.owner_state(&owner, node.namespace.as_deref()).await? {
                OwnerState::Absent => gone.push(owner),
                OwnerState::DeletingDependents => waiting.push(owner),
                OwnerState::Present => solid.push(owner),
            }
        }
        if !solid.is_empty() {
            if gone.is_empty() && waiting.is_empty() {
                return Ok(());
            }
            let keep: Vec<&OwnerRef> = solid.iter().collect();
            return self.set_owner_references(node, &latest, &keep).await;
        }
        let dependents = self.graph.dependents(uid);
        let policy = if !waiting.is_empty() && !dependents.is_empty() {
            // A dependent of this object waits for its own dependents too: a
            // possible cycle of blocking references, which upstream breaks by
            // making this object's references non-blocking first.
            let cycle = dependents
                .iter()
                .any(|d| self.graph.node(d).is_some_and(|n| n.deleting_dependents()));
            if cycle {
                self.unblock_owner_references(node, &latest).await?;
            }
            "Foreground"
        } else if node.orphan {
            "Orphan"
        } else if node.foreground {
            "Foreground"
        } else {
            "Background"
        };
        self.delete(uid, node, policy).await
    }

    /// Whether the owner a reference names exists, confirmed with the server.
    async fn owner_state(
        &self,
        owner: &OwnerRef,
        namespace: Option<&str>,
    ) -> Result<OwnerState, ClientError> {
        let group = owner
            .api_version
            .rsplit_once('/')
            .map_or("", |(group, _)| group);
        let Some(found) = self
            .kinds
            .get(&(group.to_owned(), owner.kind.clone()))
            .and_then(|i| self.resources.get(*i))
        else {
            return Err(ClientError::Decode(format!(
                "no resource for the owner kind {} {}",
                owner.api_version, owner.kind
            )));
        };
        let namespace = namespace.filter(|_| found.resource.namespaced);
        match self
            .client
            .get(&found.resource, namespace, &owner.name)
            .await
        {
            Ok(object) => {
                let metadata = partial(object)?.metadata;
                if metadata.uid.as_deref() != Some(owner.uid.as_str()) {
                    return Ok(OwnerState::Absent);
                }
                let foreground = metadata.finalizers().iter().any(|x| x == FOREGROUND);
                if foreground && metadata.deletion_timestamp.is_some() {
                    Ok(OwnerState::DeletingDependents)
                } else {
                    Ok(OwnerState::Present)
                }
            }
            Err(e) if e.is_not_found() => Ok(OwnerState::Absent),
            Err(e) => Err(e),
        }
    }

    /// Foreground: every dependent not yet being deleted is collected; the
    /// finalizer goes once no blocking dependent is left.
    async fn delete_dependents(&mut self, uid: &str, node: &Node) -> Result<(), ClientError> {
        let mut blocking = false;
        for dependent in self.graph.dependents(uid) {
            let Some(dep) = self.graph.node(&dependent) else {
                continue;
            };
            if dep.owners.iter().any(|o| o.uid == uid && o.block) {
                blocking = true;
            }
            if !dep.deleting {
                self.queue.add(dependent);
            }
        }
        if blocking {
            return Ok(());
        }
        self.remove_finalizer(uid, node, FOREGROUND).await
    }

    /// Orphan: the owner leaves every dependent's references, then its
    /// finalizer goes.
    async fn orphan_dependents(&self, uid: &str, node: &Node) -> Result<(), ClientError> {
        for dependent in self.graph.dependents(uid) {
            let Some(dep) = self.graph.node(&dependent).cloned() else {
                continue;
            };
            let Some(latest) = self.live(&dependent, &dep).await? else {
                continue;
            };
            let owners = OwnerRef::of(&latest.metadata);
            if owners.iter().all(|o| o.uid != uid) {
                continue;
            }
            let keep: Vec<&OwnerRef> = owners.iter().filter(|o| o.uid != uid).collect();
            self.set_owner_references(&dep, &latest, &keep).await?;
        }
        self.remove_finalizer(uid, node, ORPHAN).await
    }
}

/// An object read off the wire, as the collector reads it.
fn partial(object: Value) -> Result<Partial, ClientError> {
    serde_json::from_value(object).map_err(|e| ClientError::Decode(e.to_string()))
}

/// What a live GET says about an owner.
enum OwnerState {
    /// Gone (or replaced by another object of the same name).
    Absent,
    /// Being deleted in the foreground: its dependents go first.
    DeletingDependents,
    /// There.
    Present,
}
