//! Field ownership (`merge.Updater`): after an update, the manager owns
//! what it changed and others lose it; after an apply, the manager owns
//! exactly what it applied, fields it stopped applying are removed unless
//! someone else owns them, and changing a field another manager owns with
//! a different value is a conflict unless forced.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use crate::path::Path;
use crate::set::Set;
use crate::typed::{Comparison, Typed};
use crate::value::equals;

/// The fields one manager owns, in the version it wrote them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionedSet {
    pub set: Set,
    pub api_version: String,
    /// Whether the manager applied them (else it updated them).
    pub applied: bool,
}

/// Every manager's fields, by manager identifier.
pub type ManagedFields = BTreeMap<String, VersionedSet>;

/// Why a conversion between versions failed.
#[derive(Debug)]
pub enum ConvertError {
    /// The version is not served any more: its managers are dropped.
    MissingVersion,
    Failed(String),
}

/// Converts objects between the versions of a kind.
pub trait Converter {
    /// `object` in `version`.
    fn convert(&self, object: &Typed, version: &str) -> Result<Typed, ConvertError>;
}

/// A field another manager owns that an apply would change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub manager: String,
    pub path: Path,
}

/// Why an update or apply failed.
#[derive(Debug)]
pub enum UpdateError {
    Conflicts(Vec<Conflict>),
    Failed(String),
}

/// Computes ownership for one kind.
pub struct Updater<'a> {
    pub converter: &'a dyn Converter,
    /// Fields no manager owns through this endpoint, per version (the
    /// endpoint's reset fields).
    pub ignored: &'a HashMap<String, Set>,
}

impl Updater<'_> {
    fn in_version<'t>(
        &self,
        object: &'t Typed,
        version: &str,
    ) -> Result<Cow<'t, Typed>, ConvertError> {
        if object.kind.version == version {
            Ok(Cow::Borrowed(object))
        } else {
            self.converter.convert(object, version).map(Cow::Owned)
        }
    }

    fn without_ignored(&self, set: Set, version: &str) -> Set {
        match self.ignored.get(version) {
            Some(ignored) => set.recursive_difference(ignored),
            None => set,
        }
    }

    /// The ownership changes of `old` -> `new`: the other managers lose
    /// what changed (conflicts) and what was removed.
    fn settle(
        &self,
        old: &Typed,
        new: &Typed,
        version: &str,
        mut managers: ManagedFields,
        workflow: &str,
        force: bool,
    ) -> Result<(ManagedFields, Comparison), UpdateError> {
        let compare = old.compare(new);
        let compare = match self.ignored.get(version) {
            Some(ignored) => compare.exclude(ignored),
            None => compare,
        };
        let mut versions: HashMap<String, Comparison> = HashMap::new();
        let mut conflicts: Vec<(String, Set)> = Vec::new();
        let mut removed: Vec<(String, Set)> = Vec::new();
        let mut dropped = Vec::new();
        for (manager, owned) in &managers {
            if manager == workflow {
                continue;
            }
            let theirs = if owned.api_version == version {
                &compare
            } else {
                if !versions.contains_key(&owned.api_version) {
                    let pair = self
                        .in_version(old, &owned.api_version)
                        .and_then(|o| Ok((o, self.in_version(new, &owned.api_version)?)));
                    let (o, n) = match pair {
                        Ok(pair) => pair,
                        Err(ConvertError::MissingVersion) => {
                            dropped.push(manager.clone());
                            continue;
                        }
                        Err(ConvertError::Failed(e)) => return Err(UpdateError::Failed(e)),
                    };
                    let c = o.compare(&n);
                    let c = match self.ignored.get(&owned.api_version) {
                        Some(ignored) => c.exclude(ignored),
                        None => c,
                    };
                    versions.insert(owned.api_version.clone(), c);
                }
                &versions[&owned.api_version]
            };
            let conflict = owned
                .set
                .intersection(&theirs.modified.union(&theirs.added));
            if !conflict.is_empty() {
                conflicts.push((manager.clone(), conflict));
            }
            if !theirs.removed.is_empty() {
                removed.push((manager.clone(), theirs.removed.clone()));
            }
        }
        for manager in dropped {
            managers.remove(&manager);
        }
        if !force && !conflicts.is_empty() {
            let conflicts = conflicts
                .into_iter()
                .flat_map(|(manager, set)| {
                    set.paths().into_iter().map(move |path| Conflict {
                        manager: manager.clone(),
                        path,
                    })
                })
                .collect();
            return Err(UpdateError::Conflicts(conflicts));
        }
        for (manager, set) in conflicts.into_iter().chain(removed) {
            if let Some(owned) = managers.get_mut(&manager) {
                owned.set = owned.set.difference(&set);
            }
        }
        managers.retain(|_, owned| !owned.set.is_empty());
        Ok((managers, compare))
    }

    /// Ownership after `manager` changed `live` into `new` by an update:
    /// it owns what it added or modified, besides what it owned and did not
    /// remove.
    pub fn update(
        &self,
        live: &Typed,
        new: &Typed,
        version: &str,
        managers: ManagedFields,
        manager: &str,
    ) -> Result<ManagedFields, UpdateError> {
        let (mut managers, compare) = self.settle(live, new, version, managers, manager, true)?;
        let previous = managers.remove(manager).map(|m| m.set).unwrap_or_default();
        let set = previous
            .difference(&compare.removed)
            .union(&compare.modified)
            .union(&compare.added);
        let set = self.without_ignored(set, version);
        if !set.is_empty() {
            managers.insert(
                manager.to_owned(),
                VersionedSet {
                    set,
                    api_version: version.to_owned(),
                    applied: false,
                },
            );
        }
        Ok(managers)
    }

    /// `config` applied to `live` by `manager`: the new object (None when
    /// the apply changes nothing) and the new ownership.
    pub fn apply(
        &self,
        live: &Typed,
        config: &Typed,
        version: &str,
        mut managers: ManagedFields,
        manager: &str,
        force: bool,
    ) -> Result<(Option<Typed>, ManagedFields), UpdateError> {
        let merged = live
            .merge(config)
            .map_err(|e| UpdateError::Failed(format!("failed to merge config: {e}")))?;
        let last = managers.get(manager).cloned();
        let set = self.without_ignored(config.to_field_set(), version);
        managers.insert(
            manager.to_owned(),
            VersionedSet {
                set,
                api_version: version.to_owned(),
                applied: true,
            },
        );
        let new = self
            .prune(merged, &managers, manager, last)
            .map_err(|e| UpdateError::Failed(format!("failed to prune fields: {e}")))?;
        let (managers, _) = self.settle(live, &new, version, managers, manager, force)?;
        if equals(&live.value, &new.value) {
            return Ok((None, managers));
        }
        Ok((Some(new), managers))
    }

    /// Removes what `applying` applied last time (`last`) and no longer
    /// applies, unless another manager owns it.
    fn prune(
        &self,
        merged: Typed,
        managers: &ManagedFields,
        applying: &str,
        last: Option<VersionedSet>,
    ) -> Result<Typed, String> {
        let Some(last) = last.filter(|l| !l.set.is_empty()) else {
            return Ok(merged);
        };
        let converted = match self.in_version(&merged, &last.api_version) {
            Ok(c) => c.into_owned(),
            Err(ConvertError::MissingVersion) => return Ok(merged),
            Err(ConvertError::Failed(e)) => {
                return Err(format!(
                    "failed to convert merged object to last applied version: {e}"
                ));
            }
        };
        let pruned = converted.remove_items(&converted.named_fields_as_members(&last.set));
        let pruned = self.add_back_owned(&converted, pruned, &last.api_version, managers)?;
        let pruned = self.add_back_dangling(&converted, &pruned, &last)?;
        let target = managers
            .get(applying)
            .map(|m| m.api_version.as_str())
            .unwrap_or(&last.api_version);
        self.in_version(&pruned, target)
            .map(Cow::into_owned)
            .map_err(|e| format!("{e:?}"))
    }

    /// Puts back into `pruned` what any manager owns.
    fn add_back_owned(
        &self,
        merged: &Typed,
        mut pruned: Typed,
        pruned_version: &str,
        managers: &ManagedFields,
    ) -> Result<Typed, String> {
        let mut by_version: BTreeMap<&str, Set> = BTreeMap::new();
        for owned in managers.values() {
            let entry = by_version.entry(owned.api_version.as_str()).or_default();
            *entry = entry.union(&owned.set);
        }
        let mut merged = Cow::Borrowed(merged);
        // The pruned version first: a field conversion needs may be gone.
        let first = by_version
            .remove(pruned_version)
            .map(|s| (pruned_version, s));
        for (version, managed) in first.into_iter().chain(by_version) {
            let (m, p) = match (
                self.in_version(&merged, version),
                self.in_version(&pruned, version),
            ) {
                (Ok(m), Ok(p)) => (m.into_owned(), p.into_owned()),
                (Err(ConvertError::MissingVersion), _) | (_, Err(ConvertError::MissingVersion)) => {
                    continue;
                }
                (Err(ConvertError::Failed(e)), _) | (_, Err(ConvertError::Failed(e))) => {
                    return Err(format!("failed add back owned items: {e}"));
                }
            };
            let merged_set = m.named_fields_as_members(&m.to_field_set());
            let pruned_set = m.named_fields_as_members(&p.to_field_set());
            let managed = m.named_fields_as_members(&managed);
            pruned = m.remove_items(&merged_set.difference(&pruned_set.union(&managed)));
            merged = Cow::Owned(m);
        }
        Ok(pruned)
    }

    /// Removes from `merged` only what pruning removed and `last` owned:
    /// items nobody owns, or that updaters own, stay.
    fn add_back_dangling(
        &self,
        merged: &Typed,
        pruned: &Typed,
        last: &VersionedSet,
    ) -> Result<Typed, String> {
        let pruned = match self.in_version(pruned, &last.api_version) {
            Ok(p) => p,
            Err(ConvertError::MissingVersion) => return Ok(merged.clone()),
            Err(ConvertError::Failed(e)) => {
                return Err(format!("failed add back dangling items: {e}"));
            }
        };
        let pruned_set = merged.named_fields_as_members(&pruned.to_field_set());
        let merged_set = merged.named_fields_as_members(&merged.to_field_set());
        let last = merged.named_fields_as_members(&last.set);
        Ok(merged.remove_items(&merged_set.difference(&pruned_set).intersection(&last)))
    }
}
