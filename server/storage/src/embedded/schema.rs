//! The on-disk layout of the embedded store: kine's model (a revision log over a
//! key/revision history) laid out as redb tables, and the conversions from rows to
//! [`KeyValue`]s.

use bytes::Bytes;
use redb::{ReadableTable, TableDefinition};

use crate::{KeyValue, StorageError};

/// Store-wide counters, committed in the same transaction as the writes they count.
pub(super) const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
/// `META` row: the revision of the last committed write.
pub(super) const REVISION: &str = "revision";
/// `META` row: the oldest revision still readable.
pub(super) const COMPACTED: &str = "compacted";

/// Live keys -> their mod revision: current reads are one lookup here plus one in
/// `HISTORY`, without scanning old versions.
pub(super) const CURRENT: TableDefinition<&str, u64> = TableDefinition::new("current");

/// (key, revision) -> (tombstone, create_revision, value): every version of every
/// key, so a list can read at an older revision. Deletes are tombstones so that
/// such a list still sees an object deleted since.
pub(super) const HISTORY: TableDefinition<(&str, u64), (bool, u64, &[u8])> =
    TableDefinition::new("history");

/// revision -> key written at that revision: the order in which a watch replays.
pub(super) const LOG: TableDefinition<u64, &str> = TableDefinition::new("log");

/// Keys that expire -> when (milliseconds since the Unix epoch): etcd's
/// leases, kept with the keys so that an expiry survives a restart.
pub(super) const EXPIRES: TableDefinition<&str, u64> = TableDefinition::new("expires");

/// (when, key) of every expiring key: what is due, in order.
pub(super) const DUE: TableDefinition<(u64, &str), ()> = TableDefinition::new("due");

/// The key type of [`HISTORY`].
pub(super) type HistoryKey = (&'static str, u64);
/// The value type of [`HISTORY`].
pub(super) type HistoryValue = (bool, u64, &'static [u8]);

/// One row of [`HISTORY`], owned.
#[derive(Clone, Debug)]
pub(super) struct Version {
    pub(super) tombstone: bool,
    pub(super) create_revision: u64,
    pub(super) value: Bytes,
}

impl Version {
    /// Copies a row out of the table.
    pub(super) fn from_row((tombstone, create_revision, value): (bool, u64, &[u8])) -> Self {
        Version {
            tombstone,
            create_revision,
            value: Bytes::copy_from_slice(value),
        }
    }

    /// The key as a caller sees it at `mod_revision`.
    pub(super) fn into_kv(self, key: &str, mod_revision: u64) -> KeyValue {
        KeyValue {
            key: key.to_owned(),
            value: self.value,
            create_revision: self.create_revision,
            mod_revision,
        }
    }
}

/// The version of `key` written at exactly `revision`.
pub(super) fn version_at(
    history: &impl ReadableTable<HistoryKey, HistoryValue>,
    key: &str,
    revision: u64,
) -> Result<Option<Version>, StorageError> {
    let row = history.get((key, revision)).map_err(db_err)?;
    Ok(row.map(|guard| Version::from_row(guard.value())))
}

/// The newest version of `key` written strictly before `revision`, with its revision.
pub(super) fn version_before(
    history: &impl ReadableTable<HistoryKey, HistoryValue>,
    key: &str,
    revision: u64,
) -> Result<Option<(u64, Version)>, StorageError> {
    let mut range = history.range((key, 0)..(key, revision)).map_err(db_err)?;
    match range.next_back() {
        None => Ok(None),
        Some(row) => {
            let (k, v) = row.map_err(db_err)?;
            Ok(Some((k.value().1, Version::from_row(v.value()))))
        }
    }
}

/// Reads a `META` counter (0 when never written).
pub(super) fn meta(
    table: &impl ReadableTable<&'static str, u64>,
    name: &str,
) -> Result<u64, StorageError> {
    Ok(table.get(name).map_err(db_err)?.map_or(0, |g| g.value()))
}

/// Translates a redb failure: I/O trouble is `Unavailable` (it may pass), anything
/// else means the file or the code is wrong.
pub(super) fn db_err(err: impl Into<redb::Error>) -> StorageError {
    match err.into() {
        redb::Error::Io(io) => StorageError::Unavailable(format!("embedded store I/O: {io}")),
        other => StorageError::Internal(format!("embedded store: {other}")),
    }
}
