//! A page of a list from a snapshot: the objects under a prefix in key order,
//! filtered by the selectors, cut at `limit`, with what the next page needs.

use std::ops::Bound;
use std::sync::Arc;

use super::cached::Cached;
use super::index::IndexName;
use super::state::Snapshot;
use crate::selectors::Matches;
use crate::selectors::field::FieldSelector;
use crate::selectors::label::LabelSelector;

/// One page of a list.
pub struct Page {
    /// The matching objects, in key order.
    pub items: Vec<Arc<Cached>>,
    /// The last key of the page when more matching objects follow.
    pub continue_after: Option<Arc<str>>,
    /// How many objects follow, counted only without selectors (as
    /// Kubernetes reports remainingItemCount, and as the stores count).
    pub remaining: Option<u64>,
    /// The index that narrowed the objects visited, if one did.
    pub index: Option<IndexName>,
}

impl Snapshot {
    /// The objects under `prefix` after `start_after` (a full key) for which
    /// `matches` holds, at most `limit` of them (`0`: all). `selectors`, the
    /// read's label and field selectors, let an index narrow the objects
    /// visited: they must be part of what `matches` checks.
    pub fn page(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
        matches: Option<&Matches<'_>>,
        selectors: Option<(&LabelSelector, &FieldSelector)>,
    ) -> Page {
        let lower = match start_after {
            Some(key) => Bound::Excluded(key),
            None => Bound::Included(prefix),
        };
        let under_prefix = |key: &&Arc<str>| key.starts_with(prefix);
        let total = self.objects.len();
        let narrowed = selectors
            .and_then(|(labels, fields)| self.indexes.narrow(fields, labels, prefix, lower, total));
        match narrowed {
            Some((index, keys)) => {
                let objects = keys
                    .take_while(under_prefix)
                    .filter_map(|key| Some((key, self.objects.get(key)?)));
                Page {
                    index: Some(index),
                    ..cut(objects, limit, matches)
                }
            }
            None => {
                let range = self.objects.range::<_, str>((lower, Bound::Unbounded));
                cut(
                    range.take_while(|(key, _)| under_prefix(key)),
                    limit,
                    matches,
                )
            }
        }
    }
}

/// The page of `objects` (in key order) for which `matches` holds, at most
/// `limit` of them (`0`: all).
fn cut<'a>(
    mut objects: impl Iterator<Item = (&'a Arc<str>, &'a Arc<Cached>)>,
    limit: usize,
    matches: Option<&Matches<'_>>,
) -> Page {
    let passes = |cached: &Arc<Cached>| matches.is_none_or(|m| m(&**cached));
    let mut items = Vec::new();
    let mut last = None;
    for (key, cached) in objects.by_ref() {
        if !passes(cached) {
            continue;
        }
        items.push(cached.clone());
        if limit > 0 && items.len() == limit {
            last = Some(key.clone());
            break;
        }
    }
    let Some(last) = last else {
        return Page {
            items,
            continue_after: None,
            remaining: None,
            index: None,
        };
    };
    let (more, remaining) = match matches {
        None => {
            let rest = objects.count() as u64;
            (rest > 0, Some(rest))
        }
        Some(_) => (objects.any(|(_, cached)| passes(cached)), None),
    };
    Page {
        items,
        continue_after: more.then_some(last),
        remaining: remaining.filter(|_| more),
        index: None,
    }
}
