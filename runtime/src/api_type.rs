//! [`ApiType`]: defaulting and validation, implemented by `#[derive(ApiType)]` on
//! every struct of an API and here for the scalar and container types, so that the
//! generated code can recurse into every field without knowing its type.

use std::collections::BTreeMap;

use crate::validation::{FieldErrors, FieldPath};

/// Defaulting and declarative validation of one API type.
pub trait ApiType {
    /// Fills unset fields with their defaults, recursively.
    fn apply_defaults(&mut self) {}

    /// Appends every validation error found under `path`.
    fn validate(&self, _path: &FieldPath, _errs: &mut FieldErrors) {}
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

    fn validate(&self, path: &FieldPath, errs: &mut FieldErrors) {
        (**self).validate(path, errs);
    }
}

impl<T: ApiType> ApiType for Vec<T> {
    fn apply_defaults(&mut self) {
        self.iter_mut().for_each(ApiType::apply_defaults);
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

    fn validate(&self, path: &FieldPath, errs: &mut FieldErrors) {
        for (k, v) in self {
            v.validate(&path.key(k), errs);
        }
    }
}
