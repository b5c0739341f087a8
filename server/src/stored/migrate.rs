//! The one-time move of a store written by kapi before it laid keys out as
//! kube-apiserver 1.32 does: every kind was kept under
//! `/registry/<group>/<plural>` (core kinds under `/registry/<plural>`);
//! now each kind is kept under its [`storage_prefix`] (`/registry/deployments`,
//! `/registry/minions`, `/registry/services/specs`), and the kinds upstream
//! stores as JSON (CustomResourceDefinitions as v1beta1, APIServices) are
//! rewritten so.
//!
//! It runs at start, before any cache, watch or controller reads the store,
//! in every replica (each move is safe to repeat and to race), and is
//! remembered by a marker key so later starts skip it. A store kube-apiserver
//! wrote has nothing under the old prefixes and is only marked.
//!
//! [`storage_prefix`]: kapi_runtime::ResourceInfo::storage_prefix

use bytes::Bytes;
use kapi_runtime::proto::envelope;
use kapi_runtime::scheme::{KindEntry, Scheme};
use kapi_storage::{KeyValue, ListOptions, Storage, StorageError};

use super::codec::{StorageMediaType, decode_stored};
use super::keys::ROOT;

/// The key that says the store is laid out as kube-apiserver 1.32 lays it out.
pub const MARKER: &str = "/registry/kapi.dev/storage-layout";
/// The marker's value once the move is done.
const LAYOUT: &str = "kube-apiserver-1.32";
/// The marker's value while a move is under way: a start that finds it
/// finishes what a start that died did (the bitmaps dropped, the
/// compaction), though nothing is left to move.
const MOVING: &str = "moving";

/// What the move did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Migrated {
    /// Objects moved to their new key.
    pub moved: usize,
    /// Objects rewritten in place in the format upstream stores them in.
    pub rewritten: usize,
    /// Whether the store was laid out the old way (it had the old keys).
    pub was_old: bool,
}

/// Moves what is kept under the old layout to the new one, rewrites the
/// kinds upstream stores as JSON, deletes `drop` (state kept in a format
/// that cannot be moved, rebuilt by its owner after the move), and marks the
/// store. Nothing is done on a store already marked.
pub async fn migrate(
    storage: &dyn Storage,
    scheme: &Scheme,
    media_type: StorageMediaType,
    drop: &[&str],
) -> Result<Migrated, StorageError> {
    let resumed = match storage.get(MARKER).await? {
        Some(marker) if marker.value.as_ref() == LAYOUT.as_bytes() => {
            return Ok(Migrated::default());
        }
        Some(_) => true,
        None => false,
    };
    // Written before the first move, not before looking: two replicas
    // starting on a new store must not take each other's look for a move.
    let mut moving = resumed;
    let mut done = Migrated::default();
    for entry in scheme.entries().filter(|e| e.hub().is_none()) {
        let info = entry.info;
        let old = old_prefix(info.group, info.plural);
        if old != info.storage_prefix {
            done.moved += move_kind(storage, entry, &old, &mut moving).await?;
        }
        if info.storage_json || entry.ops.stored_as().is_some() {
            done.rewritten += rewrite_kind(storage, entry, media_type, &mut moving).await?;
        }
    }
    done.was_old = done.moved > 0 || done.rewritten > 0 || resumed;
    if done.was_old {
        for key in drop {
            match storage.delete(key, None).await {
                Ok(_) | Err(StorageError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
    }
    storage
        .guaranteed_update(MARKER, &mut |_| {
            Ok(kapi_storage::Update::Write(Bytes::from_static(
                LAYOUT.as_bytes(),
            )))
        })
        .await?;
    if done.was_old {
        // Resource versions read before the move name keys that are gone:
        // a client resuming from one must relist, as after an etcd restore.
        let revision = storage.current_revision().await?;
        storage.compact(revision).await?;
    }
    Ok(done)
}

/// Marks the store as being moved, once, before its first change.
async fn mark_moving(storage: &dyn Storage, moving: &mut bool) -> Result<(), StorageError> {
    if *moving {
        return Ok(());
    }
    match storage
        .create(MARKER, Bytes::from_static(MOVING.as_bytes()))
        .await
    {
        Ok(_) | Err(StorageError::AlreadyExists(_)) => {}
        Err(e) => return Err(e),
    }
    *moving = true;
    Ok(())
}

/// Where kapi kept a kind before.
fn old_prefix(group: &str, plural: &str) -> String {
    if group.is_empty() {
        plural.to_owned()
    } else {
        format!("{group}/{plural}")
    }
}

/// Moves every object of `entry`'s kind kept under `old` to its key now.
async fn move_kind(
    storage: &dyn Storage,
    entry: &KindEntry,
    old: &str,
    moving: &mut bool,
) -> Result<usize, StorageError> {
    let prefix = format!("{ROOT}{old}/");
    // An old key holds the namespace and the name: a longer one under the
    // same prefix is a key of the new layout (`services/specs/<ns>/<name>`
    // under the old `services/`), which stays.
    let segments = if entry.info.namespaced { 2 } else { 1 };
    let mut moved = 0;
    let mut start_after = None;
    loop {
        let page = storage
            .list(
                &prefix,
                ListOptions {
                    limit: 500,
                    start_after: start_after.take(),
                    ..ListOptions::default()
                },
            )
            .await?;
        for kv in &page.items {
            let Some(rest) = kv.key.strip_prefix(&prefix) else {
                continue;
            };
            if rest.split('/').count() != segments {
                continue;
            }
            let new = format!("{ROOT}{}/{rest}", entry.info.storage_prefix);
            mark_moving(storage, moving).await?;
            move_one(storage, kv, &new).await?;
            moved += 1;
        }
        match page.continue_after {
            Some(last) => start_after = Some(last),
            None => return Ok(moved),
        }
    }
}

/// Writes `kv` under `new` and deletes it: safe to repeat after a crash
/// between the two, and to race with another replica doing the same.
async fn move_one(storage: &dyn Storage, kv: &KeyValue, new: &str) -> Result<(), StorageError> {
    match storage.create(new, kv.value.clone()).await {
        Ok(_) => {}
        Err(StorageError::AlreadyExists(_)) => {
            // Moved before (or by another replica): the new key is kept.
            tracing::debug!(old = %kv.key, new, "already moved");
        }
        Err(e) => return Err(e),
    }
    match storage.delete(&kv.key, Some(kv.mod_revision)).await {
        Ok(_) | Err(StorageError::NotFound(_)) => Ok(()),
        Err(StorageError::Conflict(_)) => {
            // Changed since it was read: only a server of the old layout
            // writes there, and it must not run beside this one.
            tracing::warn!(key = %kv.key, "an old key changed while it was moved; left in place");
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Rewrites the objects of `entry`'s kind that kapi kept as protobuf where
/// upstream keeps JSON (a CustomResourceDefinition written as v1 protobuf):
/// decoded and encoded again. JSON is left as it is (kube-apiserver's own,
/// or kapi's v1 JSON, which upstream reads too), to be rewritten by the next
/// update.
async fn rewrite_kind(
    storage: &dyn Storage,
    entry: &KindEntry,
    media_type: StorageMediaType,
    moving: &mut bool,
) -> Result<usize, StorageError> {
    let prefix = super::keys::prefix(entry.info, None);
    let page = storage.list(&prefix, ListOptions::default()).await?;
    let mut rewritten = 0;
    for kv in page
        .items
        .iter()
        .filter(|kv| kv.value.starts_with(envelope::MAGIC))
    {
        let encoded =
            decode_stored(entry, kv).and_then(|mut object| media_type.encode(entry, &mut object));
        let bytes = match encoded {
            Ok(bytes) => bytes,
            Err(e) => {
                tracing::warn!(key = %kv.key, error = %e, "a stored object could not be read; left as it is");
                continue;
            }
        };
        if bytes == kv.value {
            continue;
        }
        mark_moving(storage, moving).await?;
        match storage.update(&kv.key, bytes, kv.mod_revision).await {
            Ok(_) => rewritten += 1,
            Err(StorageError::Conflict(_) | StorageError::NotFound(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(rewritten)
}
