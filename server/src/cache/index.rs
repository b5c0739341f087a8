//! The cache's indexes (upstream's cacher indexers), which narrow a list or
//! a watch's initial objects to the keys that can match instead of every
//! object:
//!
//! - for each field its kind indexes (`indexed_fields`: a pod's
//!   `spec.nodeName`), the keys of the objects holding each value, for a
//!   field selector that pins the field to one value;
//! - every label of every object, for a label selector that requires a
//!   label to hold one value (`app=web`) or one of a few (`app in (a,b)`).
//!
//! Persistent sets, so a snapshot shares them as it shares the objects.

use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

use imbl::{OrdMap, OrdSet};

use super::cached::Cached;
use crate::selectors::Selectable;
use crate::selectors::field::FieldSelector;
use crate::selectors::label::LabelSelector;

/// The keys of the objects holding one value of a field.
pub type Keys = OrdSet<Arc<str>>;

/// One field's index.
#[derive(Clone)]
struct Index {
    field: &'static str,
    by_value: OrdMap<Arc<str>, Keys>,
}

/// Every label of every object as `(label, value, object key)`, in that
/// order: the keys of the objects holding one value of a label are one
/// range, in key order. One set rather than a set per value, as most values
/// (a pod's `pod-template-hash`, a job's `controller-uid`) are held by few
/// objects, where a set of their own would cost more than the entries.
type Labels = OrdSet<(Arc<str>, Arc<str>, Arc<str>)>;

/// Every index of one resource's objects.
#[derive(Clone, Default)]
pub struct Indexes {
    fields: Vec<Index>,
    labels: Labels,
}

/// The index that narrowed a read, as upstream's metrics name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexName {
    /// `f:<field>`.
    Field(&'static str),
    /// `l:<label>`.
    Label(Arc<str>),
}

impl fmt::Display for IndexName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexName::Field(field) => write!(f, "f:{field}"),
            IndexName::Label(label) => write!(f, "l:{label}"),
        }
    }
}

/// The keys a read was narrowed to, in key order, from where it starts.
pub type Narrowed<'a> = (IndexName, Box<dyn Iterator<Item = &'a Arc<str>> + 'a>);

impl Indexes {
    /// Empty indexes of `fields` and of labels.
    pub fn new(fields: &'static [&'static str]) -> Indexes {
        Indexes {
            fields: fields
                .iter()
                .map(|&field| Index {
                    field,
                    by_value: OrdMap::new(),
                })
                .collect(),
            labels: Labels::new(),
        }
    }

    /// Records that the object at `key` changed from `prev` to `next` (either
    /// absent for a creation or a deletion).
    pub fn update(&mut self, key: &Arc<str>, prev: Option<&Cached>, next: Option<&Cached>) {
        for index in &mut self.fields {
            let old = prev.map(|c| value(c, index.field));
            let new = next.map(|c| value(c, index.field));
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
        let (old, new) = (labels(prev), labels(next));
        if old == new {
            return;
        }
        for &(label, value) in &old {
            if !new.contains(&(label, value)) {
                self.remove_label(label, value, key);
            }
        }
        for &(label, value) in &new {
            if !old.contains(&(label, value)) {
                self.insert_label(label, value, key);
            }
        }
    }

    fn insert_label(&mut self, label: &str, value: &str, key: &Arc<str>) {
        // The label and value texts are shared with the entries that hold
        // them already.
        let (label, value) = match self.labels.range(from(label, value, "")..).next() {
            Some((l, v, _)) if &**l == label && &**v == value => (l.clone(), v.clone()),
            Some((l, _, _)) if &**l == label => (l.clone(), Arc::from(value)),
            _ => (Arc::from(label), Arc::from(value)),
        };
        self.labels.insert((label, value, key.clone()));
    }

    fn remove_label(&mut self, label: &str, value: &str, key: &Arc<str>) {
        self.labels.remove(&from(label, value, key));
    }

    /// The keys a read under `prefix` from `lower` (`Included(prefix)` or
    /// `Excluded(<the last key of the previous page>)`) is narrowed to by its
    /// selectors, with the index used: the value a field selector pins an
    /// indexed field to, else the label requirement held by the fewest
    /// objects, when fewer than half of the `total`. `None` when no index
    /// helps. The selectors themselves must still be applied.
    pub fn narrow<'a>(
        &'a self,
        fields: &FieldSelector,
        labels: &LabelSelector,
        prefix: &str,
        lower: Bound<&str>,
        total: usize,
    ) -> Option<Narrowed<'a>> {
        if let Some(narrowed) = self.narrow_fields(fields, lower) {
            return Some(narrowed);
        }
        // Counting a candidate stops at the best one's count so far.
        let mut best = None;
        let mut fewest = total / 2;
        for (label, values) in labels.required_values() {
            let count = values
                .iter()
                .map(|value| self.label_keys(label, value, lower))
                .flat_map(|keys| keys.take_while(|key| key.starts_with(prefix)))
                .take(fewest)
                .count();
            if count < fewest {
                (best, fewest) = (Some((label, values)), count);
            }
        }
        let (label, values) = best?;
        let name = IndexName::Label(Arc::from(label));
        if let [value] = values {
            return Some((name, Box::new(self.label_keys(label, value, lower))));
        }
        // Several values: their keys merged into key order.
        let mut keys: Vec<&Arc<str>> = values
            .iter()
            .flat_map(|value| {
                let keys = self.label_keys(label, value, lower);
                keys.take_while(|key| key.starts_with(prefix))
            })
            .collect();
        keys.sort_unstable();
        // A structured selector may list a value twice.
        keys.dedup();
        Some((name, Box::new(keys.into_iter())))
    }

    /// The keys of the objects whose indexed `field` holds `value`, in key
    /// order; `None` when `field` is not indexed.
    pub fn keys_of<'a>(
        &'a self,
        field: &str,
        value: &str,
    ) -> Option<impl Iterator<Item = &'a Arc<str>> + 'a> {
        let index = self.fields.iter().find(|index| index.field == field)?;
        Some(index.by_value.get(value).into_iter().flatten())
    }

    fn narrow_fields<'a>(
        &'a self,
        fields: &FieldSelector,
        lower: Bound<&str>,
    ) -> Option<Narrowed<'a>> {
        self.fields.iter().find_map(|index| {
            let value = fields.exact_value(index.field)?;
            let name = IndexName::Field(index.field);
            let Some(keys) = index.by_value.get(value) else {
                return Some((
                    name,
                    Box::new(std::iter::empty()) as Box<dyn Iterator<Item = _>>,
                ));
            };
            let keys = keys.range::<_, str>((lower, Bound::Unbounded));
            Some((name, Box::new(keys) as Box<dyn Iterator<Item = _>>))
        })
    }

    /// The keys of the objects whose `label` is `value`, from `lower` on.
    fn label_keys<'a>(
        &'a self,
        label: &str,
        value: &str,
        lower: Bound<&str>,
    ) -> impl Iterator<Item = &'a Arc<str>> + 'a {
        let (label, value) = (Arc::<str>::from(label), Arc::<str>::from(value));
        let at = |key: &str| (label.clone(), value.clone(), Arc::from(key));
        let start = match lower {
            Bound::Included(key) => Bound::Included(at(key)),
            Bound::Excluded(key) => Bound::Excluded(at(key)),
            Bound::Unbounded => Bound::Included(at("")),
        };
        self.labels
            .range((start, Bound::Unbounded))
            .take_while(move |(l, v, _)| *l == label && *v == value)
            .map(|(_, _, key)| key)
    }
}

/// A label entry to look up or to start a range from.
fn from(label: &str, value: &str, key: &str) -> (Arc<str>, Arc<str>, Arc<str>) {
    (Arc::from(label), Arc::from(value), Arc::from(key))
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

/// The labels of an object (none for no object).
fn labels(cached: Option<&Cached>) -> Vec<(&str, &str)> {
    cached.map(Cached::labels).unwrap_or_default()
}

/// An object's value of `field` as a field selector reads it: an absent
/// field reads as empty (the indexed fields are strings).
pub(super) fn value(object: &dyn Selectable, field: &str) -> String {
    object.field_text(field).unwrap_or_default()
}
