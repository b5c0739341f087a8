//! `Compare`: the fields added, modified and removed from one value to
//! another.

use serde_json::Value;

use super::{as_list, as_map, item_element};
use crate::path::{Path, PathElement};
use crate::schema::{DEDUCED, List, MapType, Relationship, Resolved, Schema, TypeRef};
use crate::set::Set;
use crate::value::equals;

/// The difference between two values, as field sets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    pub removed: Set,
    pub modified: Set,
    pub added: Set,
}

impl Comparison {
    /// Whether nothing changed.
    pub fn is_same(&self) -> bool {
        self.removed.is_empty() && self.modified.is_empty() && self.added.is_empty()
    }

    /// The comparison without the fields of `set` or below them
    /// (`ExcludeFields`, the reset fields of an endpoint).
    pub fn exclude(&self, set: &Set) -> Comparison {
        Comparison {
            removed: self.removed.recursive_difference(set),
            modified: self.modified.recursive_difference(set),
            added: self.added.recursive_difference(set),
        }
    }
}

/// Compares `lhs` (before) with `rhs` (after).
pub fn compare(schema: &Schema, ty: TypeRef, lhs: &Value, rhs: &Value) -> Comparison {
    let mut walker = Walker {
        schema,
        path: Vec::new(),
        out: Comparison::default(),
    };
    walker.node(ty, Some(lhs), Some(rhs));
    walker.out
}

struct Walker<'s> {
    schema: &'s Schema,
    path: Path,
    out: Comparison,
}

impl<'s> Walker<'s> {
    fn node(&mut self, ty: TypeRef, lhs: Option<&Value>, rhs: Option<&Value>) {
        let atom = self.schema.resolve(ty);
        let (alhs, arhs) = (atom.deduce(lhs), atom.deduce(rhs));
        let in_leaf = if rhs.is_none() {
            self.atom(alhs, lhs, rhs)
        } else if lhs.is_none() || alhs.same(&arhs) {
            self.atom(arhs, lhs, rhs)
        } else {
            // Values of different shapes (an untyped field that was a
            // string and is now a map): both readings count.
            self.atom(alhs, lhs, rhs);
            self.atom(arhs, lhs, rhs)
        };
        if !in_leaf {
            if lhs.is_none() {
                self.out.added.insert(&self.path);
            } else if rhs.is_none() {
                self.out.removed.insert(&self.path);
            }
        }
    }

    /// Handles one reading of the node; true when it was compared as a leaf.
    fn atom(&mut self, atom: Resolved<'s>, lhs: Option<&Value>, rhs: Option<&Value>) -> bool {
        if let Some((map, relationship)) = atom.map {
            self.map(map, relationship, lhs, rhs)
        } else if atom.scalar.is_some() {
            self.leaf(lhs, rhs);
            true
        } else if let Some(list) = atom.list {
            self.list(list, lhs, rhs)
        } else {
            false
        }
    }

    fn leaf(&mut self, lhs: Option<&Value>, rhs: Option<&Value>) {
        match (lhs, rhs) {
            (None, _) => self.out.added.insert(&self.path),
            (_, None) => self.out.removed.insert(&self.path),
            (Some(l), Some(r)) if !equals(l, r) => self.out.modified.insert(&self.path),
            _ => {}
        }
    }

    fn map(
        &mut self,
        map: &'s MapType,
        relationship: Relationship,
        lhs: Option<&Value>,
        rhs: Option<&Value>,
    ) -> bool {
        let (l, r) = (as_map(lhs), as_map(rhs));
        let empty = l.is_none_or(|m| m.is_empty()) && r.is_none_or(|m| m.is_empty());
        if relationship == Relationship::Atomic || empty {
            self.leaf(lhs, rhs);
            return true;
        }
        let child_ty = |key: &str| map.type_of(key).unwrap_or(DEDUCED);
        for (key, lv) in l.into_iter().flatten() {
            self.path.push(PathElement::Field(key.clone()));
            self.node(child_ty(key), Some(lv), r.and_then(|r| r.get(key)));
            self.path.pop();
        }
        for (key, rv) in r.into_iter().flatten() {
            if l.is_some_and(|l| l.contains_key(key)) {
                continue;
            }
            self.path.push(PathElement::Field(key.clone()));
            self.node(child_ty(key), None, Some(rv));
            self.path.pop();
        }
        false
    }

    fn list(&mut self, list: &'s List, lhs: Option<&Value>, rhs: Option<&Value>) -> bool {
        let (l, r) = (as_list(lhs), as_list(rhs));
        let empty = l.is_none_or(|i| i.is_empty()) && r.is_none_or(|i| i.is_empty());
        if list.relationship == Relationship::Atomic || empty {
            self.leaf(lhs, rhs);
            return true;
        }
        // Items grouped by key, in first-seen order (left side first).
        let mut order: Vec<PathElement> = Vec::new();
        let mut groups: Vec<(Vec<&Value>, Vec<&Value>)> = Vec::new();
        for (side, items) in [(0, l), (1, r)] {
            for item in items.into_iter().flatten() {
                let Ok(pe) = item_element(self.schema, list, item) else {
                    continue;
                };
                let at = match order.iter().position(|p| *p == pe) {
                    Some(at) => at,
                    None => {
                        order.push(pe);
                        groups.push((Vec::new(), Vec::new()));
                        order.len() - 1
                    }
                };
                if side == 0 {
                    groups[at].0.push(item);
                } else {
                    groups[at].1.push(item);
                }
            }
        }
        for (pe, (ls, rs)) in order.into_iter().zip(groups) {
            self.path.push(pe);
            match (ls.len(), rs.len()) {
                (0, 0) => {}
                (0..=1, 0..=1) => self.node(list.element, ls.first().copied(), rs.first().copied()),
                (2.., 2..) => {
                    let same =
                        ls.len() == rs.len() && ls.iter().zip(&rs).all(|(a, b)| equals(a, b));
                    if !same {
                        self.out.modified.insert(&self.path);
                    }
                }
                (2.., _) => {
                    if let Some(r) = rs.first() {
                        self.node(list.element, None, Some(r));
                    }
                    self.out.removed.insert(&self.path);
                }
                (_, _) => {
                    if let Some(l) = ls.first() {
                        self.node(list.element, Some(l), None);
                    }
                    self.out.added.insert(&self.path);
                }
            }
            self.path.pop();
        }
        false
    }
}
