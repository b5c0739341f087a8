//! Compaction: forgetting history nobody may read any more, like etcd's compact.

use std::collections::BTreeSet;

use redb::{ReadableTable, Table};

use super::apply::{Applied, OpError, Tables};
use super::schema::{HistoryKey, HistoryValue};
use crate::StorageError;

/// Compacts to `target`: afterwards reads at `target` still work, reads below it
/// are `Expired`. A target at or below the compacted revision changes nothing.
///
/// Only keys written since the previous compaction can hold versions to drop (any
/// other key kept just its newest version at the previous compaction), so the work
/// is proportional to the writes since then, not to the size of the store.
pub(super) fn compact(t: &mut Tables<'_>, target: u64) -> Result<Applied, OpError> {
    if target > t.revision {
        return Err(OpError::Rejected(StorageError::TooLargeRevision {
            requested: target,
            current: t.revision,
        }));
    }
    if target > t.compacted {
        for key in keys_written(t, t.compacted, target)? {
            compact_key(&mut t.history, &key, target)?;
        }
        // A watch from `target` replays revisions after it; older log entries go.
        t.log.retain_in(..target, |_, _| false)?;
        t.compacted = target;
    }
    Ok(Applied {
        kv: None,
        events: Vec::new(),
    })
}

/// The keys written at revisions `from..=to`, per the revision log.
fn keys_written(t: &Tables<'_>, from: u64, to: u64) -> Result<BTreeSet<String>, OpError> {
    let mut keys = BTreeSet::new();
    for row in t.log.range(from..=to)? {
        let (_, key) = row?;
        keys.insert(key.value().to_owned());
    }
    Ok(keys)
}

/// Drops the versions of `key` at or below `target` except the newest one, which a
/// read at `target` still needs, unless it is a tombstone (then nothing needs it).
fn compact_key(
    history: &mut Table<'_, HistoryKey, HistoryValue>,
    key: &str,
    target: u64,
) -> Result<(), OpError> {
    let mut versions = Vec::new();
    for row in history.range((key, 0)..=(key, target))? {
        let (k, v) = row?;
        versions.push((k.value().1, v.value().0));
    }
    let keep_newest = matches!(versions.last(), Some((_, tombstone)) if !tombstone);
    if keep_newest {
        versions.pop();
    }
    for (revision, _) in versions {
        history.remove((key, revision))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use bytes::Bytes;
    use redb::{ReadableDatabase, ReadableTableMetadata};

    use super::super::EmbeddedStore;
    use super::super::schema::{HISTORY, LOG};
    use crate::Storage;

    fn rows(store: &EmbeddedStore) -> (u64, u64) {
        let txn = store.shared.db.begin_read().unwrap();
        let history = txn.open_table(HISTORY).unwrap().len().unwrap();
        let log = txn.open_table(LOG).unwrap().len().unwrap();
        (history, log)
    }

    #[tokio::test]
    async fn compaction_keeps_only_what_a_read_at_the_target_needs() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(dir.path()).unwrap();
        let v = |s: &'static str| Bytes::from_static(s.as_bytes());
        let k1 = store.create("/k", v("1")).await.unwrap();
        let k2 = store.update("/k", v("2"), k1.mod_revision).await.unwrap();
        store.create("/gone", v("g")).await.unwrap();
        store.delete("/gone", None).await.unwrap();
        let target = store.current_revision().await.unwrap();
        store.update("/k", v("3"), k2.mod_revision).await.unwrap();
        assert_eq!(rows(&store), (5, 5));

        store.compact(target).await.unwrap();
        // History: /k at 2 (needed at the target) and at 5; the deleted key is gone.
        // Log: the entries at and after the target.
        assert_eq!(rows(&store), (2, 2));
        // Compacting again to the same revision changes nothing.
        store.compact(target).await.unwrap();
        assert_eq!(rows(&store), (2, 2));
        assert_eq!(store.compacted_revision().await.unwrap(), target);
    }
}
