//! Values walked with their schema (`typed.TypedValue`): the field set a
//! value holds, the comparison of two values, the merge of a configuration
//! into a live object, the removal of a set of fields, and the validation of
//! an applied configuration.

mod compare;
mod merge;
mod remove;
mod to_set;
mod validate;

use std::sync::Arc;

use serde_json::Value;

pub use compare::Comparison;

use crate::path::PathElement;
use crate::schema::{List, Relationship, Schema, TypeRef};
use crate::set::Set;

/// The schema of one kind in one version: its node types and its root.
#[derive(Debug)]
pub struct KindSchema {
    /// The apiVersion (`apps/v1`) the schema reads.
    pub version: String,
    pub schema: Schema,
    pub root: TypeRef,
}

/// A value of a kind, with the schema it is read by.
#[derive(Clone, Debug)]
pub struct Typed {
    pub value: Value,
    pub kind: Arc<KindSchema>,
}

impl Typed {
    /// A value read by `kind`.
    pub fn new(value: Value, kind: Arc<KindSchema>) -> Typed {
        Typed { value, kind }
    }

    /// The paths of every leaf, list item and map entry the value holds
    /// (`ToFieldSet`).
    pub fn to_field_set(&self) -> Set {
        to_set::field_set(&self.kind.schema, self.kind.root, &self.value)
    }

    /// What changed from `self` to `other` (`Compare`).
    pub fn compare(&self, other: &Typed) -> Comparison {
        compare::compare(&self.kind.schema, self.kind.root, &self.value, &other.value)
    }

    /// `other` merged into `self` (`Merge`): a configuration applied to a
    /// live object.
    pub fn merge(&self, other: &Typed) -> Result<Typed, String> {
        let value = merge::merge(&self.kind.schema, self.kind.root, &self.value, &other.value)?;
        Ok(Typed::new(value, self.kind.clone()))
    }

    /// The value without the paths of `set` (`RemoveItems`).
    pub fn remove_items(&self, set: &Set) -> Typed {
        let value = remove::remove(&self.kind.schema, self.kind.root, &self.value, set);
        Typed::new(value, self.kind.clone())
    }

    /// `set` with every struct field that has children in it also a member
    /// (`EnsureNamedFieldsAreMembers`), so that removing the set removes a
    /// struct field its last owner gave up as a whole.
    pub fn named_fields_as_members(&self, set: &Set) -> Set {
        to_set::named_fields_as_members(&self.kind.schema, self.kind.root, set)
    }

    /// Upstream's complaints about a value its schema cannot read: unknown
    /// fields, wrong scalar types, list items without keys or duplicated.
    pub fn validate(&self) -> Vec<String> {
        validate::validate(&self.kind.schema, self.kind.root, &self.value)
    }
}

/// The path element of a list item: its keys (with schema defaults for
/// absent ones) in a list of type map, itself in a set.
pub(crate) fn item_element(
    schema: &Schema,
    list: &List,
    item: &Value,
) -> Result<PathElement, String> {
    if list.relationship != Relationship::Associative {
        return Err("invalid indexing of non-associative list".into());
    }
    if list.keys.is_empty() {
        return match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => {
                Err("associative list without keys has an element that's an explicit null".into())
            }
            scalar => Ok(PathElement::Value(scalar.clone())),
        };
    }
    let fields = match item {
        Value::Null => return Err("associative list with keys may not have a null element".into()),
        Value::Object(fields) => fields,
        _ => return Err("associative list with keys may not have non-map elements".into()),
    };
    let element_map = schema.resolve(list.element).map;
    let mut key = Vec::with_capacity(list.keys.len());
    for name in &list.keys {
        if let Some(v) = fields.get(name) {
            key.push((name.clone(), v.clone()));
        } else if let Some(default) = element_map
            .and_then(|(m, _)| m.field(name))
            .and_then(|f| f.default.clone())
        {
            key.push((name.clone(), default));
        }
    }
    if key.is_empty() {
        let names: Vec<String> = list.keys.iter().map(|k| format!("{k:?}")).collect();
        return Err(format!(
            "associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
            names.join(" ")
        ));
    }
    key.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(PathElement::Key(key))
}

/// The entries of a map value.
pub(crate) fn as_map(v: Option<&Value>) -> Option<&serde_json::Map<String, Value>> {
    match v {
        Some(Value::Object(m)) => Some(m),
        _ => None,
    }
}

/// The items of a list value.
pub(crate) fn as_list(v: Option<&Value>) -> Option<&Vec<Value>> {
    match v {
        Some(Value::Array(items)) => Some(items),
        _ => None,
    }
}
