//! The garbage collector's view of the cluster: per object (by uid) only what
//! the collector needs — where it is, its owners, whether it is being deleted
//! and how — plus an owner-uid -> dependents index, both rebuilt from watch
//! events. Memory is bounded per object.

use std::collections::{HashMap, HashSet};

use kapi_runtime::meta::ObjectMeta;
use serde::Deserialize;

/// The finalizer of a foreground deletion.
pub const FOREGROUND: &str = "foregroundDeletion";
/// The finalizer of an orphaning deletion.
pub const ORPHAN: &str = "orphan";

/// One entry of `metadata.ownerReferences`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerRef {
    /// The owner's uid.
    pub uid: String,
    /// The owner's apiVersion.
    pub api_version: String,
    /// The owner's kind.
    pub kind: String,
    /// The owner's name.
    pub name: String,
    /// `blockOwnerDeletion`.
    pub block: bool,
}

impl OwnerRef {
    /// The references of an object's metadata.
    pub fn of(metadata: &ObjectMeta) -> Vec<OwnerRef> {
        metadata
            .owner_references
            .iter()
            .flatten()
            .map(|r| OwnerRef {
                uid: r.uid.clone(),
                api_version: r.api_version.clone(),
                kind: r.kind.clone(),
                name: r.name.clone(),
                block: r.block_owner_deletion.unwrap_or(false),
            })
            .collect()
    }
}

/// An object of any resource as the collector reads it: its metadata only
/// (upstream's PartialObjectMetadata), typed.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Partial {
    /// The object's metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
}

/// One object.
#[derive(Clone, Debug)]
pub struct Node {
    /// Index of its resource in the collector's resource list.
    pub resource: usize,
    /// Its namespace (cluster-scoped objects: `None`).
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
    /// Its owners.
    pub owners: Vec<OwnerRef>,
    /// It has a deletionTimestamp.
    pub deleting: bool,
    /// It carries the `foregroundDeletion` finalizer.
    pub foreground: bool,
    /// It carries the `orphan` finalizer.
    pub orphan: bool,
}

impl Node {
    /// The node an object's metadata describes, with its uid.
    pub fn of(resource: usize, object: &Partial) -> Option<(String, Node)> {
        let metadata = &object.metadata;
        let uid = metadata.uid.clone()?;
        let has = |f: &str| metadata.finalizers().iter().any(|x| x == f);
        let node = Node {
            resource,
            namespace: metadata.namespace.clone(),
            name: metadata.name.clone().unwrap_or_default(),
            owners: OwnerRef::of(metadata),
            deleting: metadata.deletion_timestamp.is_some(),
            foreground: has(FOREGROUND),
            orphan: has(ORPHAN),
        };
        Some((uid, node))
    }

    /// Being deleted with the foreground policy: waits for its dependents.
    pub fn deleting_dependents(&self) -> bool {
        self.deleting && self.foreground
    }
}

/// Every object and who depends on whom.
#[derive(Debug, Default)]
pub struct Graph {
    nodes: HashMap<String, Node>,
    dependents: HashMap<String, HashSet<String>>,
}

impl Graph {
    /// The node of `uid`.
    pub fn node(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid)
    }

    /// The uids of the objects that name `uid` among their owners.
    pub fn dependents(&self, uid: &str) -> Vec<String> {
        self.dependents
            .get(uid)
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Records an added or changed object; returns the uids to look at. As
    /// upstream's graph builder, only what matters to the collector counts:
    /// a new object, changed owners, or a change in its deletion (a status
    /// update of an owned object costs nothing).
    pub fn upsert(&mut self, uid: String, node: Node) -> Vec<String> {
        let matters = |n: &Node| (n.deleting, n.foreground, n.orphan);
        let old = self.nodes.get(&uid);
        if old.is_some_and(|old| old.owners == node.owners && matters(old) == matters(&node)) {
            return Vec::new();
        }
        let mut todo = Vec::new();
        if !node.owners.is_empty() || (node.deleting && (node.foreground || node.orphan)) {
            todo.push(uid.clone());
        }
        let owners: Vec<String> = node.owners.iter().map(|o| o.uid.clone()).collect();
        let old_owners = self
            .nodes
            .insert(uid.clone(), node)
            .map(|n| n.owners)
            .unwrap_or_default();
        for owner in &old_owners {
            self.unlink(&owner.uid, &uid);
        }
        for owner in &owners {
            self.dependents
                .entry(owner.clone())
                .or_default()
                .insert(uid.clone());
        }
        // An owner waiting on its dependents (or orphaning them) may be done.
        for owner in old_owners.iter().map(|o| &o.uid).chain(&owners) {
            if self.nodes.get(owner).is_some_and(|n| n.deleting) {
                todo.push(owner.clone());
            }
        }
        todo
    }

    /// Forgets a deleted object; returns the uids to look at (its dependents,
    /// and owners waiting for it).
    pub fn remove(&mut self, uid: &str) -> Vec<String> {
        let mut todo = self.dependents(uid);
        if let Some(node) = self.nodes.remove(uid) {
            for owner in &node.owners {
                self.unlink(&owner.uid, uid);
                if self.nodes.get(&owner.uid).is_some_and(|n| n.deleting) {
                    todo.push(owner.uid.clone());
                }
            }
        }
        todo
    }

    /// A fresh list of resource `resource`: its objects not in `uids` are gone.
    pub fn relisted(&mut self, resource: usize, uids: &HashSet<String>) -> Vec<String> {
        let gone: Vec<String> = self
            .nodes
            .iter()
            .filter(|(uid, n)| n.resource == resource && !uids.contains(*uid))
            .map(|(uid, _)| uid.clone())
            .collect();
        gone.iter().flat_map(|uid| self.remove(uid)).collect()
    }

    fn unlink(&mut self, owner: &str, dependent: &str) {
        if let Some(set) = self.dependents.get_mut(owner) {
            set.remove(dependent);
            if set.is_empty() {
                self.dependents.remove(owner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn node(uid: &str, owners: &[&str]) -> (String, Node) {
        let refs: Vec<Value> = owners
            .iter()
            .map(|o| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": o, "uid": o}))
            .collect();
        let object: Partial = serde_json::from_value(
            json!({"metadata": {"uid": uid, "name": uid, "namespace": "a", "ownerReferences": refs}}),
        )
        .unwrap();
        Node::of(0, &object).unwrap()
    }

    #[test]
    fn dependents_follow_owner_references() {
        let mut graph = Graph::default();
        let (uid, n) = node("owner", &[]);
        assert!(graph.upsert(uid, n).is_empty());
        let (uid, n) = node("child", &["owner"]);
        assert_eq!(graph.upsert(uid, n), vec!["child"]);
        let (uid, n) = node("child", &["owner"]);
        assert!(
            graph.upsert(uid, n).is_empty(),
            "an unchanged node is not looked at again"
        );
        assert_eq!(graph.dependents("owner"), vec!["child"]);
        assert_eq!(graph.remove("owner"), vec!["child"]);
        let (uid, n) = node("child", &[]);
        graph.upsert(uid, n);
        assert!(graph.dependents("owner").is_empty());
        assert!(graph.relisted(0, &HashSet::new()).is_empty());
        assert!(graph.node("child").is_none());
    }
}
