//! Applies one write request to the open write transaction of a batch. Each check
//! reads the in-transaction state, so a request sees the earlier requests of its
//! own batch exactly as if they had been committed one by one.

use bytes::Bytes;
use redb::{ReadableTable, Table, WriteTransaction};

use super::schema::{
    COMPACTED, CURRENT, DUE, EXPIRES, HISTORY, HistoryKey, HistoryValue, LOG, META, REVISION,
    Version, db_err, meta, version_at,
};
use crate::{KeyValue, StorageError, WatchEvent};

/// Why a request did not apply.
pub(super) enum OpError {
    /// The request itself fails (e.g. a conflict); the rest of the batch goes on.
    Rejected(StorageError),
    /// The transaction is unusable; the whole batch fails with this error.
    Fatal(StorageError),
}

impl From<redb::StorageError> for OpError {
    fn from(err: redb::StorageError) -> Self {
        OpError::Fatal(db_err(err))
    }
}

impl From<StorageError> for OpError {
    /// Errors of the schema helpers are read failures inside the transaction.
    fn from(err: StorageError) -> Self {
        OpError::Fatal(err)
    }
}

/// What an applied request answers and tells watchers.
pub(super) struct Applied {
    /// The reply (`None` for compaction).
    pub(super) kv: Option<KeyValue>,
    /// The events to publish once the batch is durable (none when nothing
    /// changed; an expiry may delete several keys).
    pub(super) events: Vec<WatchEvent>,
}

/// The tables of one batch's write transaction and the counters it advances.
pub(super) struct Tables<'txn> {
    pub(super) meta: Table<'txn, &'static str, u64>,
    pub(super) current: Table<'txn, &'static str, u64>,
    pub(super) history: Table<'txn, HistoryKey, HistoryValue>,
    pub(super) log: Table<'txn, u64, &'static str>,
    pub(super) expires: Table<'txn, &'static str, u64>,
    pub(super) due: Table<'txn, (u64, &'static str), ()>,
    /// The revision of the last write, including this batch's writes so far.
    pub(super) revision: u64,
    /// The compacted revision, including this batch's compactions so far.
    pub(super) compacted: u64,
}

impl<'txn> Tables<'txn> {
    /// Opens (creating if needed) every table and reads the counters.
    pub(super) fn open(txn: &'txn WriteTransaction) -> Result<Self, StorageError> {
        let meta_table = txn.open_table(META).map_err(db_err)?;
        let revision = meta(&meta_table, REVISION)?;
        let compacted = meta(&meta_table, COMPACTED)?;
        Ok(Tables {
            meta: meta_table,
            current: txn.open_table(CURRENT).map_err(db_err)?,
            history: txn.open_table(HISTORY).map_err(db_err)?,
            log: txn.open_table(LOG).map_err(db_err)?,
            expires: txn.open_table(EXPIRES).map_err(db_err)?,
            due: txn.open_table(DUE).map_err(db_err)?,
            revision,
            compacted,
        })
    }

    /// Persists the counters; call once after the batch, before committing.
    pub(super) fn save_counters(&mut self) -> Result<(), StorageError> {
        self.meta.insert(REVISION, self.revision).map_err(db_err)?;
        self.meta
            .insert(COMPACTED, self.compacted)
            .map_err(db_err)?;
        Ok(())
    }

    /// The live version of `key` with its mod revision.
    fn live(&self, key: &str) -> Result<Option<(u64, Version)>, OpError> {
        let Some(revision) = self.current.get(key)?.map(|g| g.value()) else {
            return Ok(None);
        };
        match version_at(&self.history, key, revision)? {
            Some(version) => Ok(Some((revision, version))),
            None => Err(OpError::Fatal(StorageError::Internal(format!(
                "{key}: current revision {revision} missing from history"
            )))),
        }
    }

    /// Makes `key` expire at `when` (milliseconds since the epoch), or
    /// never: each write of a key replaces its expiry, as a put with or
    /// without a lease does in etcd.
    fn set_expiry(&mut self, key: &str, when: Option<u64>) -> Result<(), OpError> {
        if let Some(old) = self.expires.remove(key)?.map(|g| g.value()) {
            self.due.remove((old, key))?;
        }
        if let Some(when) = when {
            self.expires.insert(key, when)?;
            self.due.insert((when, key), ())?;
        }
        Ok(())
    }

    /// Records a new version of `key` at the next revision.
    fn write(&mut self, key: &str, version: &Version) -> Result<u64, OpError> {
        let revision = self.revision + 1;
        let row = (
            version.tombstone,
            version.create_revision,
            version.value.as_ref(),
        );
        self.history.insert((key, revision), row)?;
        if version.tombstone {
            self.current.remove(key)?;
        } else {
            self.current.insert(key, revision)?;
        }
        self.log.insert(revision, key)?;
        self.revision = revision;
        Ok(revision)
    }
}

/// Creates `key` (expiring at `expires`, if given); `AlreadyExists` if it
/// is live.
pub(super) fn create(
    t: &mut Tables<'_>,
    key: &str,
    value: Bytes,
    expires: Option<u64>,
) -> Result<Applied, OpError> {
    if t.current.get(key)?.is_some() {
        return Err(OpError::Rejected(StorageError::AlreadyExists(
            key.to_owned(),
        )));
    }
    let version = Version {
        tombstone: false,
        create_revision: t.revision + 1,
        value,
    };
    let revision = t.write(key, &version)?;
    t.set_expiry(key, expires)?;
    let kv = version.into_kv(key, revision);
    Ok(Applied {
        kv: Some(kv.clone()),
        events: vec![WatchEvent::Added(kv)],
    })
}

/// Replaces `key` if its mod revision is `expected` (expiring at `expires`,
/// if given); a byte-equal value writes nothing (Kubernetes skips no-op
/// updates so the resourceVersion stays) and leaves its expiry.
pub(super) fn update(
    t: &mut Tables<'_>,
    key: &str,
    value: Bytes,
    expected: u64,
    expires: Option<u64>,
) -> Result<Applied, OpError> {
    let (current_rev, current) = expect_live(t, key, Some(expected))?;
    let prev = current.clone().into_kv(key, current_rev);
    if current.value == value {
        return Ok(Applied {
            kv: Some(prev),
            events: Vec::new(),
        });
    }
    let version = Version { value, ..current };
    let revision = t.write(key, &version)?;
    t.set_expiry(key, expires)?;
    let kv = version.into_kv(key, revision);
    Ok(Applied {
        kv: Some(kv.clone()),
        events: vec![WatchEvent::Modified { kv, prev }],
    })
}

/// Deletes `key` (if given, only at mod revision `expected`) with a tombstone, and
/// answers the last value it had.
pub(super) fn delete(
    t: &mut Tables<'_>,
    key: &str,
    expected: Option<u64>,
) -> Result<Applied, OpError> {
    let (current_rev, current) = expect_live(t, key, expected)?;
    let tombstone = Version {
        tombstone: true,
        create_revision: current.create_revision,
        value: Bytes::new(),
    };
    let revision = t.write(key, &tombstone)?;
    t.set_expiry(key, None)?;
    let prev = current.into_kv(key, current_rev);
    Ok(Applied {
        kv: Some(prev.clone()),
        events: vec![WatchEvent::Deleted { prev, revision }],
    })
}

/// Most keys one expiry pass deletes.
const EXPIRE_AT_ONCE: usize = 1000;

/// Deletes every key whose expiry is at or before `now` (milliseconds since
/// the epoch), each at a revision of its own, as etcd deletes the keys of a
/// lease that ran out.
///
/// At most [`EXPIRE_AT_ONCE`] keys per call, so that a store reopened after a
/// long stop does not hold the writer (and send watchers one huge batch)
/// for every Event at once: the next call goes on.
pub(super) fn expire(t: &mut Tables<'_>, now: u64) -> Result<Applied, OpError> {
    let due: Vec<(u64, String)> = t
        .due
        .range(..=(now, "\u{10FFFF}"))?
        .take(EXPIRE_AT_ONCE)
        .map(|row| row.map(|(k, _)| (k.value().0, k.value().1.to_owned())))
        .collect::<Result<_, _>>()?;
    let mut events = Vec::with_capacity(due.len());
    for (when, key) in due {
        t.due.remove((when, key.as_str()))?;
        t.expires.remove(key.as_str())?;
        if let Ok(mut deleted) = delete(t, &key, None) {
            events.append(&mut deleted.events);
        }
    }
    Ok(Applied { kv: None, events })
}

/// The live version of `key`, checked against an expected mod revision.
fn expect_live(
    t: &Tables<'_>,
    key: &str,
    expected: Option<u64>,
) -> Result<(u64, Version), OpError> {
    let Some((revision, version)) = t.live(key)? else {
        return Err(OpError::Rejected(StorageError::NotFound(key.to_owned())));
    };
    match expected {
        Some(expected) if expected != revision => {
            Err(OpError::Rejected(StorageError::Conflict(key.to_owned())))
        }
        _ => Ok((revision, version)),
    }
}
