//! Reads: each runs in one redb read transaction, a snapshot that the writer never
//! blocks, so a list is consistent at the revision it reports.

use std::ops::Bound;

use redb::{Database, ReadOnlyTable, ReadableDatabase};

use super::schema::{
    COMPACTED, CURRENT, HISTORY, HistoryKey, HistoryValue, META, REVISION, Version, db_err, meta,
    version_at,
};
use crate::{KeyValue, ListOptions, ListResult, Predicate, StorageError};

/// Reads one live key.
pub(super) fn get(db: &Database, key: &str) -> Result<Option<KeyValue>, StorageError> {
    let txn = db.begin_read().map_err(db_err)?;
    let current = txn.open_table(CURRENT).map_err(db_err)?;
    let Some(revision) = current.get(key).map_err(db_err)?.map(|g| g.value()) else {
        return Ok(None);
    };
    let history = txn.open_table(HISTORY).map_err(db_err)?;
    let version = version_at(&history, key, revision)?
        .filter(|v| !v.tombstone)
        .ok_or_else(|| {
            StorageError::Internal(format!("{key}: revision {revision} missing from history"))
        })?;
    Ok(Some(version.into_kv(key, revision)))
}

/// Lists `prefix` at `opts.revision` (see [`crate::Storage::list`]).
pub(super) fn list(
    db: &Database,
    prefix: &str,
    opts: &ListOptions,
) -> Result<ListResult, StorageError> {
    let txn = db.begin_read().map_err(db_err)?;
    let meta_table = txn.open_table(META).map_err(db_err)?;
    let current_rev = meta(&meta_table, REVISION)?;
    let revision = resolve_revision(opts.revision, current_rev, meta(&meta_table, COMPACTED)?)?;
    let history = txn.open_table(HISTORY).map_err(db_err)?;
    let current = txn.open_table(CURRENT).map_err(db_err)?;
    let mut page = Page::new(opts);
    let start_after = opts.start_after.as_deref();
    if revision == current_rev {
        scan_current(&current, &history, prefix, start_after, &mut page)?;
    } else {
        scan_history(&history, prefix, start_after, revision, &mut page)?;
    }
    let continue_after = page
        .more
        .then(|| page.items.last().map(|kv| kv.key.clone()));
    let continue_after = continue_after.flatten();
    // Counting is cheap only over the live keys and without a predicate (the same
    // cases in which Kubernetes reports remainingItemCount).
    let remaining = match &continue_after {
        Some(last) if opts.predicate.is_none() && revision == current_rev => {
            Some(count_after(&current, prefix, last)?)
        }
        // A later page of a chunked list reads at the first page's revision:
        // count what was alive then, as etcd counts a range at a revision.
        Some(last) if opts.predicate.is_none() => {
            Some(count_after_at(&history, prefix, last, revision)?)
        }
        _ => None,
    };
    Ok(ListResult {
        items: page.items,
        revision,
        continue_after,
        remaining,
    })
}

/// The revision a list reads at: `0` means current; compacted ones are `Expired`.
fn resolve_revision(requested: u64, current: u64, compacted: u64) -> Result<u64, StorageError> {
    match requested {
        0 => Ok(current),
        r if r < compacted => Err(StorageError::Expired {
            requested: r,
            compacted,
        }),
        r if r > current => Err(StorageError::TooLargeRevision {
            requested: r,
            current,
        }),
        r => Ok(r),
    }
}

/// Collects matching items up to the limit, then notes whether one more exists.
struct Page<'o> {
    predicate: Option<&'o Predicate>,
    limit: usize,
    items: Vec<KeyValue>,
    more: bool,
}

impl<'o> Page<'o> {
    fn new(opts: &'o ListOptions) -> Self {
        Page {
            predicate: opts.predicate.as_ref(),
            limit: opts.limit,
            items: Vec::new(),
            more: false,
        }
    }

    /// Takes one candidate in key order; false once the page is settled.
    fn offer(&mut self, kv: KeyValue) -> bool {
        // The predicate runs here, inside the scan, so the limit counts only
        // matching items (Kubernetes' SelectionPredicate with limit).
        if self.predicate.is_some_and(|p| !p(&kv)) {
            return true;
        }
        if self.limit != 0 && self.items.len() == self.limit {
            self.more = true;
            return false;
        }
        self.items.push(kv);
        true
    }
}

/// Where a scan of `prefix` starts: after `start_after` when it lies inside it.
fn start_bound<'k>(prefix: &'k str, start_after: Option<&'k str>) -> Bound<&'k str> {
    match start_after {
        Some(after) if after >= prefix => Bound::Excluded(after),
        _ => Bound::Included(prefix),
    }
}

/// Lists at the current revision: the live keys, one history lookup each.
fn scan_current(
    current: &ReadOnlyTable<&'static str, u64>,
    history: &ReadOnlyTable<HistoryKey, HistoryValue>,
    prefix: &str,
    start_after: Option<&str>,
    page: &mut Page<'_>,
) -> Result<(), StorageError> {
    let bounds = (start_bound(prefix, start_after), Bound::Unbounded);
    for row in current.range::<&str>(bounds).map_err(db_err)? {
        let (key, revision) = row.map_err(db_err)?;
        let (key, revision) = (key.value(), revision.value());
        if !key.starts_with(prefix) {
            break;
        }
        let version = version_at(history, key, revision)?.ok_or_else(|| {
            StorageError::Internal(format!("{key}: revision {revision} missing from history"))
        })?;
        if !page.offer(version.into_kv(key, revision)) {
            break;
        }
    }
    Ok(())
}

/// Lists at an older revision: for each key, its newest version at or below
/// `revision`, unless that is a tombstone.
fn scan_history(
    history: &ReadOnlyTable<HistoryKey, HistoryValue>,
    prefix: &str,
    start_after: Option<&str>,
    revision: u64,
    page: &mut Page<'_>,
) -> Result<(), StorageError> {
    let lower = match start_bound(prefix, start_after) {
        Bound::Excluded(after) => Bound::Excluded((after, u64::MAX)),
        _ => Bound::Included((prefix, 0)),
    };
    // The newest visible version of the key being scanned: (key, revision, row).
    let mut best: Option<(String, u64, Version)> = None;
    for row in history
        .range::<(&str, u64)>((lower, Bound::Unbounded))
        .map_err(db_err)?
    {
        let (k, v) = row.map_err(db_err)?;
        let (key, rev) = k.value();
        if !key.starts_with(prefix) {
            break;
        }
        if best.as_ref().is_some_and(|(k, _, _)| k != key) && !offer_visible(page, best.take()) {
            return Ok(());
        }
        if rev <= revision {
            let version = Version::from_row(v.value());
            match &mut best {
                Some((k, r, v)) if k == key => (*r, *v) = (rev, version),
                _ => best = Some((key.to_owned(), rev, version)),
            }
        }
    }
    offer_visible(page, best);
    Ok(())
}

/// Offers a key's visible version unless it is a tombstone; false once settled.
fn offer_visible(page: &mut Page<'_>, best: Option<(String, u64, Version)>) -> bool {
    match best {
        Some((key, rev, version)) if !version.tombstone => page.offer(version.into_kv(&key, rev)),
        _ => true,
    }
}

/// How many live keys under `prefix` sort after `last`.
fn count_after(
    current: &ReadOnlyTable<&'static str, u64>,
    prefix: &str,
    last: &str,
) -> Result<u64, StorageError> {
    let mut count = 0;
    for row in current
        .range::<&str>((Bound::Excluded(last), Bound::Unbounded))
        .map_err(db_err)?
    {
        let (key, _) = row.map_err(db_err)?;
        if !key.value().starts_with(prefix) {
            break;
        }
        count += 1;
    }
    Ok(count)
}

/// How many keys under `prefix` after `last` were alive at `revision`, from
/// the history (each key's newest version at or before it is not a tombstone).
fn count_after_at(
    history: &ReadOnlyTable<HistoryKey, HistoryValue>,
    prefix: &str,
    last: &str,
    revision: u64,
) -> Result<u64, StorageError> {
    let mut count = 0;
    // The key being scanned and whether its newest version so far is alive.
    let mut current: Option<(String, bool)> = None;
    for row in history
        .range::<(&str, u64)>((Bound::Excluded((last, u64::MAX)), Bound::Unbounded))
        .map_err(db_err)?
    {
        let (k, v) = row.map_err(db_err)?;
        let (key, rev) = k.value();
        if !key.starts_with(prefix) {
            break;
        }
        if current.as_ref().is_some_and(|(k, _)| k != key) {
            count += u64::from(current.take().is_some_and(|(_, alive)| alive));
        }
        if rev <= revision {
            let alive = !v.value().0;
            match &mut current {
                Some((k, a)) if k == key => *a = alive,
                _ => current = Some((key.to_owned(), alive)),
            }
        }
    }
    count += u64::from(current.is_some_and(|(_, alive)| alive));
    Ok(count)
}
