//! The selection predicate of a read (upstream's `storage.SelectionPredicate`):
//! label and field selectors as a test of objects of the storage version,
//! applied to the cache's objects in memory and inside the backend's scans
//! (so that `limit` counts matches).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use kapi_runtime::scheme::KindEntry;
use kapi_storage::{KeyValue, Predicate};

use crate::body::Object;
use crate::scope::Scope;
use crate::selectors::field::FieldSelector;
use crate::selectors::label::LabelSelector;
use crate::selectors::{Matches, Selectable};
use crate::stored::codec;

/// Whether an object of the storage version passes the selectors.
pub type Matcher = Arc<Matches<'static>>;

/// The backend-side filter for the selectors of a watch, or none when they
/// select everything.
pub fn predicate(
    scope: Scope<'_>,
    labels: &Arc<LabelSelector>,
    fields: &Arc<FieldSelector>,
) -> Option<Predicate> {
    let matcher = matcher(scope, labels, fields)?;
    let entry = scope.entry.clone();
    Some(Arc::new(move |kv: &KeyValue| {
        codec::decode_stored(&entry, kv).is_ok_and(|object| matcher(&object))
    }))
}

/// A backend-side filter that keeps what it decoded: each object a list's
/// scan lets through is decoded once, by the filter, and the page is built
/// from those objects rather than by decoding the values again.
pub(super) struct Decoding {
    entry: KindEntry,
    matcher: Matcher,
    /// The objects that passed, by key (a list reads at one revision, so a
    /// key has one value). At most one more than the page holds: a backend
    /// looks at one match past the limit to tell whether more follow.
    passed: Mutex<HashMap<String, Object>>,
}

impl Decoding {
    /// A filter by `matcher` of objects of `entry`'s kind.
    pub(super) fn new(entry: &KindEntry, matcher: Matcher) -> Arc<Decoding> {
        Arc::new(Decoding {
            entry: entry.clone(),
            matcher,
            passed: Mutex::default(),
        })
    }

    /// The filter the backend runs: an object that does not decode does
    /// not pass, as it cannot match.
    pub(super) fn predicate(self: &Arc<Decoding>) -> Predicate {
        let this = self.clone();
        Arc::new(move |kv: &KeyValue| {
            let Ok(object) = codec::decode_stored(&this.entry, kv) else {
                return false;
            };
            if !(this.matcher)(&object) {
                return false;
            }
            this.passed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(kv.key.clone(), object);
            true
        })
    }

    /// The object the filter decoded for `kv`, if it let `kv` through.
    pub(super) fn take(&self, kv: &KeyValue) -> Option<Object> {
        self.passed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&kv.key)
    }
}

/// The selectors as a test of objects of the storage version, or none when
/// they select everything. Fields are those of the served version (an
/// events.k8s.io Event selects on `regarding.name`, stored as a core Event's
/// `involvedObject.name`).
pub fn matcher(
    scope: Scope<'_>,
    labels: &Arc<LabelSelector>,
    fields: &Arc<FieldSelector>,
) -> Option<Matcher> {
    if labels.is_everything() && fields.is_everything() {
        return None;
    }
    let served = scope.served.clone();
    let (labels, fields) = (labels.clone(), fields.clone());
    // A field the object leaves out reads as Go's zero value of its type,
    // looked up once per request rather than once per object.
    // The selector reads an absent field as empty already: only the non-empty
    // zeros (`false`, `0`) are kept.
    let zeros: Vec<(String, &'static str)> = fields
        .fields()
        .map(|f| (f.to_owned(), scope.served.absent_field_text(f)))
        .filter(|(_, zero)| !zero.is_empty())
        .collect();
    let text = move |object: &dyn Selectable, field: &str| {
        object.field_text(field).or_else(|| {
            let (_, zero) = zeros.iter().find(|(f, _)| f == field)?;
            Some((*zero).to_owned())
        })
    };
    Some(Arc::new(move |object: &dyn Selectable| {
        if !labels.matches_by(|key| object.label(key)) {
            return false;
        }
        if fields.is_everything() {
            return true;
        }
        match served.hub() {
            None => fields.matches(|f| text(object, f)),
            Some(_) => object
                .object()
                .and_then(|object| served.to_served(object.into_owned().into_typed()).ok())
                .map(Object::new)
                .is_some_and(|served| fields.matches(|f| text(&served, f))),
        }
    }))
}
