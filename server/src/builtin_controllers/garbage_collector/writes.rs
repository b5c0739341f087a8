//! The collector's writes: ownerReferences kept or unblocked and finalizers
//! removed (merge patches guarded by the resourceVersion read), and deletes
//! guarded by the uid.

use std::collections::HashSet;

use serde_json::{Value, json};

use kapi_runtime::meta::OwnerReference;

use super::Collector;
use super::graph::{Node, OwnerRef, Partial};
use crate::controllers::client::ClientError;

impl Collector {
    /// Keeps only the references to `keep` in the object's ownerReferences.
    pub(super) async fn set_owner_references(
        &self,
        node: &Node,
        latest: &Partial,
        keep: &[&OwnerRef],
    ) -> Result<(), ClientError> {
        let uids: HashSet<&str> = keep.iter().map(|o| o.uid.as_str()).collect();
        let refs: Vec<OwnerReference> = latest
            .metadata
            .owner_references
            .iter()
            .flatten()
            .filter(|r| uids.contains(r.uid.as_str()))
            .cloned()
            .collect();
        self.patch_owner_references(node, latest, refs).await
    }

    /// Sets `blockOwnerDeletion: false` on every reference that blocks.
    pub(super) async fn unblock_owner_references(
        &self,
        node: &Node,
        latest: &Partial,
    ) -> Result<(), ClientError> {
        let Some(mut refs) = latest.metadata.owner_references.clone() else {
            return Ok(());
        };
        for r in &mut refs {
            if r.block_owner_deletion == Some(true) {
                r.block_owner_deletion = Some(false);
            }
        }
        self.patch_owner_references(node, latest, refs).await
    }

    /// Writes `refs` as the object's ownerReferences (a merge patch guarded by
    /// the resourceVersion read; a conflict is retried from the queue).
    async fn patch_owner_references(
        &self,
        node: &Node,
        latest: &Partial,
        refs: Vec<OwnerReference>,
    ) -> Result<(), ClientError> {
        let Some(found) = self.resources.get(node.resource) else {
            return Ok(());
        };
        let patch = json!({
            "metadata": {
                "ownerReferences": if refs.is_empty() { Value::Null } else { json!(refs) },
                "resourceVersion": latest.metadata.resource_version,
            }
        });
        match self
            .client
            .merge_patch(
                &found.resource,
                node.namespace.as_deref(),
                &node.name,
                &patch,
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }

    pub(super) async fn remove_finalizer(
        &self,
        uid: &str,
        node: &Node,
        finalizer: &str,
    ) -> Result<(), ClientError> {
        let Some(found) = self.resources.get(node.resource) else {
            return Ok(());
        };
        let Some(latest) = self.live(uid, node).await? else {
            return Ok(());
        };
        let finalizers: Vec<&String> = latest
            .metadata
            .finalizers()
            .iter()
            .filter(|f| *f != finalizer)
            .collect();
        let patch = json!({
            "metadata": {
                "finalizers": finalizers,
                "resourceVersion": latest.metadata.resource_version,
            }
        });
        match self
            .client
            .merge_patch(
                &found.resource,
                node.namespace.as_deref(),
                &node.name,
                &patch,
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }

    pub(super) async fn delete(
        &self,
        uid: &str,
        node: &Node,
        policy: &str,
    ) -> Result<(), ClientError> {
        let Some(found) = self.resources.get(node.resource) else {
            return Ok(());
        };
        let options = json!({
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "propagationPolicy": policy,
            "preconditions": { "uid": uid },
        });
        tracing::debug!(resource = %found.resource.plural, name = %node.name, policy, "garbage collecting");
        match self
            .client
            .delete(
                &found.resource,
                node.namespace.as_deref(),
                &node.name,
                &options,
            )
            .await
        {
            Ok(_) => Ok(()),
            // Gone already, or another object by now (uid precondition).
            Err(e) if e.is_not_found() || e.is_conflict() => Ok(()),
            Err(e) => Err(e),
        }
    }
}
