//! Sets of field paths (`fieldpath.Set`): a trie whose nodes hold the path
//! elements that end there (members) and the subtrees below (children),
//! both sorted, as upstream keeps them; set algebra; and the FieldsV1 JSON
//! form managedFields carry.

use std::cmp::Ordering;

use serde_json::Value;

use crate::path::{Path, PathElement};
use crate::value::write_go_json_string;

/// A set of paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Set {
    members: Vec<PathElement>,
    children: Vec<(PathElement, Set)>,
}

impl Set {
    /// The empty set.
    pub fn new() -> Set {
        Set::default()
    }

    /// Whether the set holds no path.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.iter().all(|(_, c)| c.is_empty())
    }

    /// Adds a path (the empty path adds nothing).
    pub fn insert(&mut self, path: &[PathElement]) {
        let Some((first, rest)) = path.split_first() else {
            return;
        };
        if rest.is_empty() {
            if let Err(at) = self.members.binary_search(first) {
                self.members.insert(at, first.clone());
            }
        } else {
            self.child_mut(first).insert(rest);
        }
    }

    /// The subtree under `pe`, made when absent.
    pub fn child_mut(&mut self, pe: &PathElement) -> &mut Set {
        let at = match self.children.binary_search_by(|(p, _)| p.cmp(pe)) {
            Ok(at) => at,
            Err(at) => {
                self.children.insert(at, (pe.clone(), Set::new()));
                at
            }
        };
        &mut self.children[at].1
    }

    /// Whether the set holds exactly `path`.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path.split_first() {
            None => false,
            Some((first, [])) => self.members.binary_search(first).is_ok(),
            Some((first, rest)) => self.with_prefix(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// The paths under `pe`, without it (`WithPrefix`).
    pub fn with_prefix(&self, pe: &PathElement) -> Option<&Set> {
        self.children
            .binary_search_by(|(p, _)| p.cmp(pe))
            .ok()
            .map(|at| &self.children[at].1)
    }

    /// Whether `pe` is a member at this level.
    pub fn has_member(&self, pe: &PathElement) -> bool {
        self.members.binary_search(pe).is_ok()
    }

    /// The members at this level.
    pub fn members(&self) -> &[PathElement] {
        &self.members
    }

    /// The subtrees at this level.
    pub fn children(&self) -> &[(PathElement, Set)] {
        &self.children
    }

    /// Paths in either set.
    pub fn union(&self, other: &Set) -> Set {
        Set {
            members: union_sorted(&self.members, &other.members),
            children: zip_children(self, other, |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(a.union(b)),
                (Some(c), None) | (None, Some(c)) => Some(c.clone()),
                (None, None) => None,
            }),
        }
    }

    /// Paths in both sets.
    pub fn intersection(&self, other: &Set) -> Set {
        Set {
            members: self
                .members
                .iter()
                .filter(|m| other.has_member(m))
                .cloned()
                .collect(),
            children: zip_children(self, other, |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(a.intersection(b)),
                _ => None,
            }),
        }
    }

    /// Paths of this set not in `other` (a path under a member of `other`
    /// stays: see [`Set::recursive_difference`]).
    pub fn difference(&self, other: &Set) -> Set {
        Set {
            members: self
                .members
                .iter()
                .filter(|m| !other.has_member(m))
                .cloned()
                .collect(),
            children: zip_children(self, other, |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(a.difference(b)),
                (Some(a), None) => Some(a.clone()),
                _ => None,
            }),
        }
    }

    /// Paths of this set neither in `other` nor under one of its paths.
    pub fn recursive_difference(&self, other: &Set) -> Set {
        let members = self
            .members
            .iter()
            .filter(|m| !other.has_member(m))
            .cloned()
            .collect();
        let children = self
            .children
            .iter()
            .filter(|(pe, _)| !other.has_member(pe))
            .filter_map(|(pe, set)| {
                let set = match other.with_prefix(pe) {
                    Some(theirs) => set.recursive_difference(theirs),
                    None => set.clone(),
                };
                (!set.is_empty()).then(|| (pe.clone(), set))
            })
            .collect();
        Set { members, children }
    }

    /// Every path of the set, in upstream's iteration order (members of a
    /// level before its subtrees).
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        // Upstream's Iterate: this level's members, then each subtree.
        for member in &self.members {
            prefix.push(member.clone());
            out.push(prefix.clone());
            prefix.pop();
        }
        for (pe, set) in &self.children {
            prefix.push(pe.clone());
            set.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// Drops empty subtrees (left behind by the set operations).
    fn pruned(mut self) -> Set {
        self.children.retain(|(_, c)| !c.is_empty());
        self
    }
}

/// The union of two sorted element lists.
fn union_sorted(a: &[PathElement], b: &[PathElement]) -> Vec<PathElement> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            Ordering::Less => {
                out.push(a[i].clone());
                i += 1;
            }
            Ordering::Greater => {
                out.push(b[j].clone());
                j += 1;
            }
            Ordering::Equal => {
                out.push(a[i].clone());
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Combines the subtrees of two sets element by element, dropping empty
/// results.
fn zip_children(
    a: &Set,
    b: &Set,
    combine: impl Fn(Option<&Set>, Option<&Set>) -> Option<Set>,
) -> Vec<(PathElement, Set)> {
    let mut out = Vec::new();
    let (x, y) = (&a.children, &b.children);
    let (mut i, mut j) = (0, 0);
    while i < x.len() || j < y.len() {
        let order = match (x.get(i), y.get(j)) {
            (Some((p, _)), Some((q, _))) => p.cmp(q),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        let (pe, set) = match order {
            Ordering::Less => {
                i += 1;
                (&x[i - 1].0, combine(Some(&x[i - 1].1), None))
            }
            Ordering::Greater => {
                j += 1;
                (&y[j - 1].0, combine(None, Some(&y[j - 1].1)))
            }
            Ordering::Equal => {
                i += 1;
                j += 1;
                (&x[i - 1].0, combine(Some(&x[i - 1].1), Some(&y[j - 1].1)))
            }
        };
        if let Some(set) = set.map(Set::pruned)
            && !set.is_empty()
        {
            out.push((pe.clone(), set));
        }
    }
    out
}

impl Set {
    /// The FieldsV1 JSON text of the set, byte for byte as upstream writes
    /// it: keys in element order, `{}` for a member, `".": {}` for a member
    /// that also has children.
    pub fn to_fields_v1(&self) -> String {
        let mut out = String::with_capacity(64);
        out.push('{');
        self.write_contents(false, &mut out);
        out.push('}');
        out
    }

    fn write_contents(&self, include_self: bool, out: &mut String) {
        let mut first = true;
        let mut sep = |out: &mut String| {
            if !std::mem::take(&mut first) {
                out.push(',');
            }
        };
        if include_self && !(self.members.is_empty() && self.children.is_empty()) {
            sep(out);
            out.push_str("\".\":{}");
        }
        let (mut m, mut c) = (0, 0);
        while m < self.members.len() || c < self.children.len() {
            let order = match (self.members.get(m), self.children.get(c)) {
                (Some(member), Some((child, _))) => member.cmp(child),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            sep(out);
            match order {
                Ordering::Less => {
                    write_go_json_string(out, &self.members[m].to_key());
                    out.push_str(":{}");
                    m += 1;
                }
                Ordering::Greater | Ordering::Equal => {
                    let (pe, set) = &self.children[c];
                    write_go_json_string(out, &pe.to_key());
                    out.push_str(":{");
                    set.write_contents(order == Ordering::Equal, out);
                    out.push('}');
                    c += 1;
                    if order == Ordering::Equal {
                        m += 1;
                    }
                }
            }
        }
    }

    /// Reads a FieldsV1 JSON document. Keys of unknown element types are
    /// skipped; malformed keys are errors, as upstream reports them.
    pub fn from_fields_v1(json: &str) -> Result<Set, String> {
        let value: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        match &value {
            Value::Object(_) => Ok(read_node(&value)?.0.unwrap_or_default()),
            Value::Null => Ok(Set::new()),
            _ => Err("ReadMapCB: expect { or n, but found something else".into()),
        }
    }
}

/// One level of FieldsV1: the set below and whether the node itself is a
/// member (it holds `"."` or nothing at all).
fn read_node(value: &Value) -> Result<(Option<Set>, bool), String> {
    let Value::Object(map) = value else {
        return Err("ReadMapCB: expect { or n".into());
    };
    let mut children: Option<Set> = None;
    let mut is_member = false;
    for (key, sub) in map {
        if key == "." {
            is_member = true;
            continue;
        }
        let Some(pe) =
            PathElement::from_key(key).map_err(|e| format!("parsing key as path element: {e}"))?
        else {
            continue;
        };
        let (grandchildren, child_is_member) = read_node(sub)?;
        if child_is_member {
            let set = children.get_or_insert_with(Set::new);
            if let Err(at) = set.members.binary_search(&pe) {
                set.members.insert(at, pe.clone());
            }
        }
        if let Some(grandchildren) = grandchildren {
            let set = children.get_or_insert_with(Set::new);
            *set.child_mut(&pe) = grandchildren;
        }
    }
    if children.is_none() {
        is_member = true;
    }
    Ok((children, is_member))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(name: &str) -> PathElement {
        PathElement::field(name)
    }

    #[test]
    fn fields_v1_as_upstream_writes_it() {
        let mut set = Set::new();
        set.insert(&[f("metadata"), f("labels"), f("app")]);
        set.insert(&[f("metadata"), f("labels")]);
        let port = PathElement::Key(vec![
            ("containerPort".into(), json!(80)),
            ("protocol".into(), json!("TCP")),
        ]);
        set.insert(&[f("spec"), f("ports"), port.clone()]);
        set.insert(&[f("spec"), f("ports"), port, f("name")]);
        set.insert(&[f("spec"), f("replicas")]);
        let text = set.to_fields_v1();
        assert_eq!(
            text,
            r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{}}},"f:replicas":{}}}"#
        );
        assert_eq!(Set::from_fields_v1(&text).unwrap(), set);
    }

    #[test]
    fn algebra() {
        let mut a = Set::new();
        a.insert(&[f("a"), f("b")]);
        a.insert(&[f("c")]);
        let mut b = Set::new();
        b.insert(&[f("a")]);
        b.insert(&[f("c")]);
        assert_eq!(a.difference(&b).paths(), vec![vec![f("a"), f("b")]]);
        assert!(a.recursive_difference(&b).is_empty());
        assert_eq!(a.intersection(&b).paths(), vec![vec![f("c")]]);
        assert_eq!(a.union(&b).paths().len(), 3);
    }
}
