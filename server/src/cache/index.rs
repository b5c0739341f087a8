//! The cache's indexes: for each field its kind indexes (`indexed_fields`, a
//! pod's `spec.nodeName`), the keys of the objects holding each value. A list
//! or a watch's initial objects whose field selector pins an indexed field
//! to one value visits only those keys instead of every object (upstream's
//! cacher indexers). Persistent sets, so a snapshot shares them as it shares
//! the objects.

use std::sync::Arc;

use imbl::{OrdMap, OrdSet};

use super::cached::Cached;
use crate::body::Object;
use crate::selectors::field::FieldSelector;

/// The keys of the objects holding one value of a field.
pub type Keys = OrdSet<Arc<str>>;

/// One field's index.
#[derive(Clone)]
struct Index {
    field: &'static str,
    by_value: OrdMap<Arc<str>, Keys>,
}

/// Every index of one resource's objects.
#[derive(Clone, Default)]
pub struct Indexes(Vec<Index>);

impl Indexes {
    /// Empty indexes of `fields`.
    pub fn new(fields: &'static [&'static str]) -> Indexes {
        Indexes(
            fields
                .iter()
                .map(|&field| Index {
                    field,
                    by_value: OrdMap::new(),
                })
                .collect(),
        )
    }

    /// Records that the object at `key` changed from `prev` to `next` (either
    /// absent for a creation or a deletion).
    pub fn update(&mut self, key: &Arc<str>, prev: Option<&Cached>, next: Option<&Cached>) {
        for index in &mut self.0 {
            let old = prev.map(|c| value(c.object(), index.field));
            let new = next.map(|c| value(c.object(), index.field));
            if old == new {
                continue;
            }
            if let Some(old) = old {
                index.remove(&old, key);
            }
            if let Some(new) = new {
                index.insert(new, key);
            }
        }
    }

    /// The keys a field selector narrows a read to: those holding the value
    /// it pins an indexed field to (`field=value` or `field==value`), with
    /// that field; `None` when it pins none. The selector itself must still
    /// be applied.
    pub fn narrow(&self, fields: &FieldSelector) -> Option<(&'static str, Keys)> {
        self.0.iter().find_map(|index| {
            let value = fields.exact_value(index.field)?;
            let keys = index.by_value.get(value).cloned().unwrap_or_default();
            Some((index.field, keys))
        })
    }
}

impl Index {
    fn insert(&mut self, value: String, key: &Arc<str>) {
        self.by_value
            .entry(Arc::from(value))
            .or_default()
            .insert(key.clone());
    }

    fn remove(&mut self, value: &str, key: &Arc<str>) {
        let Some(keys) = self.by_value.get_mut(value) else {
            return;
        };
        keys.remove(key);
        if keys.is_empty() {
            self.by_value.remove(value);
        }
    }
}

/// An object's value of `field` as a field selector reads it: an absent
/// field reads as empty (the indexed fields are strings).
pub(super) fn value(object: &Object, field: &str) -> String {
    object.field_text(field).unwrap_or_default()
}
