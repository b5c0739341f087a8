//! LIST: label and field selectors applied inside the store (so `limit` counts
//! matches), `limit` + `continue` pages pinned to the first page's revision, and
//! the resourceVersion / resourceVersionMatch semantics of Kubernetes; from the
//! cache where it answers exactly what the backend would, else from the backend.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use kapi_storage::{ListResult, StorageError};
use serde::{Deserialize, Serialize};

use super::predicate::{Decoding, matcher};
use super::{Cached, CachedStore, decode};
use crate::api_error::{ApiError, ApiResult, Target};
use crate::scope::Scope;
use crate::selectors::field::FieldSelector;
use crate::selectors::label::LabelSelector;
use crate::stored::keys;

/// The query of a LIST (and of the initial state of a WATCH).
#[derive(Clone, Debug)]
pub struct ListOptions {
    /// `labelSelector`.
    pub labels: Arc<LabelSelector>,
    /// `fieldSelector`.
    pub fields: Arc<FieldSelector>,
    /// `limit` (0 = all).
    pub limit: usize,
    /// `continue`.
    pub continue_token: Option<String>,
    /// `resourceVersion`.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<String>,
}

impl Default for ListOptions {
    fn default() -> Self {
        ListOptions {
            labels: Arc::new(LabelSelector::everything()),
            fields: Arc::new(FieldSelector::everything()),
            limit: 0,
            continue_token: None,
            resource_version: None,
            resource_version_match: None,
        }
    }
}

/// One page of a list.
#[derive(Debug)]
pub struct ListPage {
    /// The objects, in the served version (shared with the watch cache,
    /// which keeps their encodings).
    pub items: Vec<Arc<Cached>>,
    /// The revision the page was read at.
    pub revision: u64,
    /// Token for the next page.
    pub continue_token: Option<String>,
    /// Matching objects after this page, when known.
    pub remaining: Option<i64>,
}

/// The continue token: base64 JSON naming the pinned revision and the last key,
/// in the shape k8s.io/apiserver uses.
#[derive(Serialize, Deserialize)]
struct ContinueToken {
    v: String,
    rv: u64,
    start: String,
}

const CONTINUE_EXPIRED: &str = "The provided continue parameter is too old to display a consistent list result. \
You can start a new list without the continue parameter, or use the continue token in this response to retrieve \
the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that \
were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

impl CachedStore {
    /// Lists objects of a kind, in one namespace or all, in the served
    /// version. The field selector must name fields the kind selects on.
    pub async fn list(&self, scope: Scope<'_>, opts: ListOptions) -> ApiResult<ListPage> {
        let prefix = keys::prefix(scope.info(), scope.namespace);
        let (revision, start_after) = self.list_start(&prefix, &opts).await?;
        if let Some(page) = self
            .list_cached(scope, &prefix, &opts, revision, start_after.as_deref())
            .await?
        {
            return Ok(page);
        }
        self.list_backend(scope, &prefix, &opts, revision, start_after)
            .await
    }

    /// A list read from the backend. Each object is decoded once: by the
    /// filter, which keeps what it let through, or (without selectors) as
    /// the page is built.
    async fn list_backend(
        &self,
        scope: Scope<'_>,
        prefix: &str,
        opts: &ListOptions,
        revision: u64,
        start_after: Option<String>,
    ) -> ApiResult<ListPage> {
        let filter = matcher(scope, &opts.labels, &opts.fields)
            .map(|matcher| Decoding::new(scope.entry, matcher));
        let store_opts = kapi_storage::ListOptions {
            revision,
            limit: opts.limit,
            start_after,
            predicate: filter.as_ref().map(Decoding::predicate),
        };
        let result = self
            .backend
            .list(prefix, store_opts)
            .await
            .map_err(|e| match e {
                StorageError::Expired { .. } if opts.continue_token.is_some() => {
                    ApiError::expired(CONTINUE_EXPIRED)
                }
                e => ApiError::from_storage(e, scope.target("")),
            })?;
        let ListResult {
            items,
            revision,
            continue_after,
            remaining,
        } = result;
        let items = items
            .iter()
            .map(|kv| {
                let object = match filter.as_ref().and_then(|f| f.take(kv)) {
                    Some(object) => object,
                    None => decode(scope.entry, kv)?,
                };
                Ok(Cached::new(scope.to_served(object)?))
            })
            .collect::<ApiResult<Vec<_>>>()?;
        let continue_token = match continue_after {
            Some(last) => Some(encode_token(
                revision,
                last.strip_prefix(prefix).unwrap_or(&last),
            )?),
            None => None,
        };
        let remaining = remaining
            .and_then(|r| i64::try_from(r).ok())
            .filter(|_| continue_token.is_some());
        Ok(ListPage {
            items,
            revision,
            continue_token,
            remaining,
        })
    }

    /// A list from the watch cache, or `None` when the cache cannot answer
    /// exactly what the store would: an `Exact` revision, a continuation
    /// whose snapshot is gone, a cache that did not catch up in time.
    /// `revision` and `start_after` are what [`CachedStore::list_start`] made of
    /// the options (so they are valid).
    async fn list_cached(
        &self,
        scope: Scope<'_>,
        prefix: &str,
        opts: &ListOptions,
        revision: u64,
        start_after: Option<&str>,
    ) -> ApiResult<Option<ListPage>> {
        if !self.cached(scope) {
            return Ok(None);
        }
        let cache = self.caches.of(scope.entry);
        if !cache.listed().await {
            return Ok(None);
        }
        let snapshot = if opts.continue_token.is_some() {
            // A kept snapshot answers only what the store still could: past a
            // compaction of its revision, the store's 410 is the answer.
            match cache.kept_snapshot(revision) {
                Some(kept) if kept.revision >= self.compacted_revision().await? => Some(kept),
                _ => None,
            }
        } else if let Some(target) = self
            .freshness(opts, cache.serves_consistent_reads())
            .await?
        {
            match cache.wait_fresh(target).await {
                true => cache.snapshot(),
                false => None,
            }
        } else {
            None
        };
        let Some(snapshot) = snapshot else {
            return Ok(None);
        };
        let matcher = matcher(scope, &opts.labels, &opts.fields);
        // The indexes hold the stored version's values.
        let narrow = scope
            .is_served_as_stored()
            .then_some((&*opts.labels, &*opts.fields));
        let page = snapshot.page(prefix, start_after, opts.limit, matcher.as_deref(), narrow);
        cache.count_list(&self.caches.metrics, &page);
        let continue_token = match &page.continue_after {
            Some(last) => {
                cache.keep_snapshot(&snapshot);
                Some(encode_token(
                    snapshot.revision,
                    last.strip_prefix(prefix).unwrap_or(last),
                )?)
            }
            None => None,
        };
        Ok(Some(ListPage {
            items: served_items(scope, page.items)?,
            revision: snapshot.revision,
            continue_token,
            remaining: page.remaining.and_then(|r| i64::try_from(r).ok()),
        }))
    }

    /// The revision a cache must have reached to answer a read with these
    /// options: the store's current one for a consistent read (no
    /// resourceVersion), the given one for `NotOlderThan`, none at all for
    /// `0`; `None` for an `Exact` read, which the store answers, and for a
    /// consistent one where the cache cannot serve those (`consistent`).
    pub(super) async fn freshness(
        &self,
        opts: &ListOptions,
        consistent: bool,
    ) -> ApiResult<Option<u64>> {
        let rv = opts.resource_version.as_deref().filter(|rv| !rv.is_empty());
        match (opts.resource_version_match.as_deref(), rv) {
            (Some("Exact"), _) => Ok(None),
            (_, None) if !consistent => Ok(None),
            (_, None) => self.current_revision().await.map(Some),
            (_, Some("0")) => Ok(Some(0)),
            (_, Some(rv)) => parse_rv(rv).map(Some),
        }
    }

    /// The revision to read at and the key to start after.
    async fn list_start(
        &self,
        prefix: &str,
        opts: &ListOptions,
    ) -> ApiResult<(u64, Option<String>)> {
        let rv = opts.resource_version.as_deref().filter(|rv| !rv.is_empty());
        if let Some(token) = &opts.continue_token {
            if rv.is_some_and(|rv| rv != "0") {
                return Err(ApiError::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            let token = decode_token(token)?;
            return Ok((
                token.rv,
                Some(format!("{prefix}{}", token.start.trim_end_matches('\0'))),
            ));
        }
        let requested = match rv {
            None | Some("0") => None,
            Some(rv) => Some(parse_rv(rv)?),
        };
        match (opts.resource_version_match.as_deref(), requested) {
            (Some("Exact"), Some(rv)) => Ok((rv, None)),
            (Some("Exact"), None) => Err(ApiError::bad_request(
                "resourceVersionMatch: Exact requires a resourceVersion other than 0",
            )),
            (Some("NotOlderThan") | None, Some(rv)) => {
                let current = self
                    .backend
                    .current_revision()
                    .await
                    .map_err(|e| ApiError::from_storage(e, Target::NONE))?;
                if rv > current {
                    return Err(ApiError::too_large_resource_version(rv, current));
                }
                Ok((0, None))
            }
            (Some("NotOlderThan") | None, None) => Ok((0, None)),
            (Some(other), _) => Err(ApiError::bad_request(format!(
                "resourceVersionMatch: Unsupported value: {other:?}: supported values: \"Exact\", \"NotOlderThan\""
            ))),
        }
    }
}

/// Parses a resourceVersion parameter.
pub fn parse_rv(rv: &str) -> ApiResult<u64> {
    rv.parse()
        .map_err(|_| {
            // kube-apiserver's text (which it sends as a 500; a client's
            // mistake is a 400 here).
            ApiError::bad_request(format!(
                "resourceVersion: Invalid value: {rv:?}: strconv.ParseUint: parsing {rv:?}: invalid syntax"
            ))
        })
}

/// Cached objects of the storage version in the served one: shared as they
/// are when the versions are the same, else each converted once for every
/// read of that version ([`Scope::to_served_cached`]).
fn served_items(scope: Scope<'_>, items: Vec<Arc<Cached>>) -> ApiResult<Vec<Arc<Cached>>> {
    if scope.is_served_as_stored() {
        return Ok(items);
    }
    items
        .into_iter()
        .map(|cached| scope.to_served_cached(&cached))
        .collect()
}

fn encode_token(rv: u64, start: &str) -> ApiResult<String> {
    let token = ContinueToken {
        v: "meta.k8s.io/v1".into(),
        rv,
        start: format!("{start}\0"),
    };
    let json = serde_json::to_vec(&token).map_err(ApiError::internal)?;
    Ok(STANDARD.encode(json))
}

fn decode_token(token: &str) -> ApiResult<ContinueToken> {
    let invalid = || {
        ApiError::bad_request("continue key is not valid: the continue token could not be decoded")
    };
    let bytes = STANDARD.decode(token).map_err(|_| invalid())?;
    let token: ContinueToken = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    if token.v != "meta.k8s.io/v1" || token.start.contains("..") || token.start.starts_with('/') {
        return Err(invalid());
    }
    Ok(token)
}
