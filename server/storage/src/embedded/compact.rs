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
        event: None,
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
