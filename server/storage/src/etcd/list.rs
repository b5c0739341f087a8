//! Reads: one key, and lists as ranges at a pinned revision.
//!
//! A list applies its predicate here, so `limit` counts matching items only: it
//! keeps reading ranges until it has `limit` matches or the prefix ends, growing
//! the range size while the predicate filters items out, as k8s.io/apiserver's
//! etcd3 store does (`GetList`).

use etcd_client::{GetOptions, GetResponse};

use super::EtcdStore;
use super::call::{Failure, etcd_revision, header_revision, key_text, key_value};
use super::keys::{Scope, key_after, prefix_range_end};
use crate::{KeyValue, ListOptions, ListResult, Storage, StorageError};

/// Keys read per range when the caller set no limit: lists of any size are
/// read in bounded responses (all at one revision, so they stay consistent).
const UNLIMITED_CHUNK: usize = 1000;
/// The largest range a filtered list grows to (Kubernetes' `maxLimit`).
const MAX_CHUNK: usize = 10_000;

/// One key, read with whatever other keys are read at the same time (see
/// `batch`).
pub(super) async fn get(store: &EtcdStore, key: &str) -> Result<Option<KeyValue>, StorageError> {
    let etcd_key = store.keys.to_etcd(key).into_bytes();
    store.reads.get(key.to_owned(), etcd_key).await
}

/// Where a list stands between two ranges.
struct Listing {
    scope: Scope,
    opts: ListOptions,
    /// The revision every range reads at (0 until the first one pinned it).
    revision: u64,
    items: Vec<KeyValue>,
}

pub(super) async fn list(
    store: &EtcdStore,
    prefix: &str,
    opts: ListOptions,
) -> Result<ListResult, StorageError> {
    let requested = opts.revision;
    let scope = store.keys.scope(prefix);
    let end = prefix_range_end(scope.etcd.as_bytes());
    let mut start = match &opts.start_after {
        Some(key) => key_after(&store.keys.to_etcd(key)),
        None => scope.etcd.clone().into_bytes(),
    };
    let mut chunk = match opts.limit {
        0 => UNLIMITED_CHUNK,
        limit => limit.min(MAX_CHUNK),
    };
    let mut listing = Listing {
        revision: requested,
        items: Vec::new(),
        scope,
        opts,
    };
    loop {
        let options = GetOptions::new()
            .with_range(end.clone())
            .with_revision(etcd_revision(listing.revision))
            .with_limit(i64::try_from(chunk).unwrap_or(i64::MAX));
        let response = match store.range(start.clone(), options).await {
            Ok(response) => response,
            Err(failure) => return Err(list_failure(store, failure, requested).await),
        };
        // A list at the current revision reads the next ranges at the revision
        // of the first one, so that all its pages show one state of the store.
        if listing.revision == 0 {
            listing.revision = header_revision(response.header())?;
        }
        let Some(next) = listing.take(response)? else {
            return Ok(listing.finish(None, None));
        };
        match next {
            Next::Full { last, remaining } => return Ok(listing.finish(Some(last), remaining)),
            Next::After(key) => start = key_after(&key),
        }
        if listing.opts.predicate.is_some() {
            chunk = (chunk * 2).min(MAX_CHUNK);
        }
    }
}

/// What follows one range.
enum Next {
    /// The page is full: its last key, and how many keys remain when known.
    Full {
        last: String,
        remaining: Option<u64>,
    },
    /// More keys may match: read on after this etcd key.
    After(String),
}

impl Listing {
    /// Takes the matching items of one range; `None` when the prefix ended.
    fn take(&mut self, mut response: GetResponse) -> Result<Option<Next>, StorageError> {
        let (more, count) = (response.more(), response.count());
        let kvs = response.take_kvs();
        let total = kvs.len();
        let mut last_etcd_key = None;
        for (index, kv) in kvs.into_iter().enumerate() {
            let etcd_key = key_text(kv.key())?.to_owned();
            let key = self.scope.to_caller(&etcd_key).ok_or_else(|| {
                StorageError::Internal(format!("etcd returned {etcd_key} outside the range"))
            })?;
            let kv = key_value(key, kv);
            if self
                .opts
                .predicate
                .as_ref()
                .is_none_or(|matches| matches(&kv))
            {
                self.items.push(kv);
            }
            let full = self.opts.limit > 0 && self.items.len() == self.opts.limit;
            if full && (index + 1 < total || more) {
                let last = self
                    .items
                    .last()
                    .map(|kv| kv.key.clone())
                    .unwrap_or_default();
                return Ok(Some(Next::Full {
                    last,
                    remaining: self.remaining(count, index + 1),
                }));
            }
            last_etcd_key = Some(etcd_key);
        }
        match last_etcd_key {
            Some(key) if more => Ok(Some(Next::After(key))),
            _ => Ok(None),
        }
    }

    /// Kubernetes' remainingItemCount: known only without a predicate, from the
    /// count of keys in the range that etcd reports with every response.
    fn remaining(&self, count: i64, consumed: usize) -> Option<u64> {
        if self.opts.predicate.is_some() {
            return None;
        }
        let count = u64::try_from(count).ok()?;
        count.checked_sub(u64::try_from(consumed).ok()?)
    }

    fn finish(self, continue_after: Option<String>, remaining: Option<u64>) -> ListResult {
        ListResult {
            items: self.items,
            revision: self.revision,
            continue_after,
            remaining,
        }
    }
}

/// Turns a failed range into the contract's error for the revision asked for.
async fn list_failure(store: &EtcdStore, failure: Failure, requested: u64) -> StorageError {
    match failure {
        Failure::Compacted => {
            // etcd does not say how far it compacted; the record may lag behind
            // a compaction made by someone else, so report at least requested+1.
            let compacted = super::compaction::compacted_revision(store)
                .await
                .unwrap_or(0)
                .max(requested + 1);
            StorageError::Expired {
                requested,
                compacted,
            }
        }
        Failure::FutureRevision => match store.current_revision().await {
            Ok(current) => StorageError::TooLargeRevision { requested, current },
            Err(err) => err,
        },
        Failure::Other(err) => err,
    }
}
