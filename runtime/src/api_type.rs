//! [`ApiType`]: defaulting and validation, implemented by `#[derive(ApiType)]` on
//! every struct of an API and here for the scalar and container types, so that the
//! generated code can recurse into every field without knowing its type.

use std::collections::BTreeMap;

use crate::validation::{FieldErrors, FieldPath};

/// Defaulting, declarative validation and semantic equality of one API type.
pub trait ApiType: PartialEq {
    /// Fills unset fields with their defaults, recursively.
    fn apply_defaults(&mut self) {}

    /// Appends every validation error found under `path`.
    fn validate(&self, _path: &FieldPath, _errs: &mut FieldErrors) {}

    /// Equality as Kubernetes' `apiequality.Semantic.DeepEqual` sees it: an
    /// absent list or map equals an empty one, recursively (both look the same
    /// on the wire). This decides whether an update changed an object's spec.
    fn semantic_eq(&self, other: &Self) -> bool {
        self == other
    }

    /// Whether the value is an empty list or map, which an absent one equals.
    fn is_empty_collection(&self) -> bool {
        false
    }

    /// Makes every empty optional list and map absent, recursively: the
    /// form a protobuf round trip leaves (the wire has no way to tell an
    /// empty repeated field or map from an absent one), so an object written
    /// as protobuf reads back as this. On JSON an absent list is `null` or
    /// omitted where an empty one is `[]`.
    fn clear_empty(&mut self) {}
}

macro_rules! leaf_api_types {
    ($($t:ty),*) => { $(impl ApiType for $t {})* };
}

leaf_api_types!(
    String,
    bool,
    i32,
    i64,
    u32,
    u64,
    f32,
    f64,
    serde_json::Value
);

impl<T: ApiType> ApiType for Option<T> {
    fn apply_defaults(&mut self) {
        if let Some(v) = self {
            v.apply_defaults();
        }
    }

    fn clear_empty(&mut self) {
        match self {
            Some(v) if v.is_empty_collection() => *self = None,
            Some(v) => v.clear_empty(),
            None => {}
        }
    }

    fn semantic_eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Some(a), Some(b)) => a.semantic_eq(b),
            (None, None) => true,
            (Some(v), None) | (None, Some(v)) => v.is_empty_collection(),
        }
    }

    fn validate(&self, path: &FieldPath, errs: &mut FieldErrors) {
        if let Some(v) = self {
            v.validate(path, errs);
        }
    }
}

impl<T: ApiType> ApiType for Box<T> {
    fn apply_defaults(&mut self) {
        (**self).apply_defaults();
    }

    fn clear_empty(&mut self) {
        (**self).clear_empty();
    }

    fn semantic_eq(&self, other: &Self) -> bool {
        (**self).semantic_eq(other)
    }

    fn is_empty_collection(&self) -> bool {
        (**self).is_empty_collection()
    }

    fn validate(&self, path: &FieldPath, errs: &mut FieldErrors) {
        (**self).validate(path, errs);
    }
}

impl<T: ApiType> ApiType for Vec<T> {
    fn apply_defaults(&mut self) {
        self.iter_mut().for_each(ApiType::apply_defaults);
    }

    fn clear_empty(&mut self) {
        self.iter_mut().for_each(ApiType::clear_empty);
    }

    fn semantic_eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a.semantic_eq(b))
    }

    fn is_empty_collection(&self) -> bool {
        self.is_empty()
    }

    fn validate(&self, path: &FieldPath, errs: &mut FieldErrors) {
        for (i, v) in self.iter().enumerate() {
            v.validate(&path.index(i), errs);
        }
    }
}

impl<T: ApiType> ApiType for BTreeMap<String, T> {
    fn apply_defaults(&mut self) {
        self.values_mut().for_each(ApiType::apply_defaults);
    }

    fn clear_empty(&mut self) {
        self.values_mut().for_each(ApiType::clear_empty);
    }

    fn semantic_eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other)
                .all(|((ka, a), (kb, b))| ka == kb && a.semantic_eq(b))
    }

    fn is_empty_collection(&self) -> bool {
        self.is_empty()
    }

    fn validate(&self, path: &FieldPath, errs: &mut FieldErrors) {
        for (k, v) in self {
            v.validate(&path.key(k), errs);
        }
    }
}
