//! The type erasure of kinds: every [`Resource`] is a [`DynObject`], and the
//! conversions between a kind's versions become
//! [`DynConversion`](crate::object::DynConversion)s for its
//! [`HubLink`](crate::object::HubLink). It sits above both traits, so that the
//! `Resource` trait only names `DynObject` and `DynObject` knows no kind.

use std::any::Any;

use serde_json::Value;

use crate::convert::Convert;
use crate::field_text;
use crate::meta::ObjectMeta;
use crate::object::{DynObject, WithTypeMeta};
use crate::resource::Resource;
use crate::resource_info::ResourceInfo;
use crate::validation::{FieldErrors, FieldPath};

impl<T: Resource> DynObject for T {
    fn info(&self) -> &'static ResourceInfo {
        T::INFO
    }

    fn metadata(&self) -> &ObjectMeta {
        Resource::metadata(self)
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        Resource::metadata_mut(self)
    }

    fn clone_object(&self) -> Box<dyn DynObject> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }

    fn as_serialize(&self) -> &dyn erased_serde::Serialize {
        self
    }

    fn to_json_value(&self) -> Result<Value, String> {
        // Through the erased serializer every kind has anyway: a direct
        // `to_value` would compile each kind's serializer once more.
        serde_json::to_value(self.as_serialize()).map_err(|e| e.to_string())
    }

    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), String> {
        let info = T::INFO;
        let mut json = serde_json::Serializer::new(out);
        self.serialize(WithTypeMeta::new(&mut json, info.kind, info.group_version))
            .map_err(|e| e.to_string())
    }

    fn field_text(&self, path: &str) -> Option<String> {
        match path {
            "metadata.name" => Resource::metadata(self).name.clone(),
            "metadata.namespace" => Resource::metadata(self).namespace.clone(),
            _ => Resource::field_label(self, path)
                .or_else(|| field_text::read(self.as_serialize(), path)),
        }
    }

    fn apply_defaults(&mut self) {
        crate::api_type::ApiType::apply_defaults(self);
    }

    fn clear_empty(&mut self) {
        crate::api_type::ApiType::clear_empty(self);
    }

    fn admit(&mut self) -> FieldErrors {
        self.prepare_for_write();
        crate::api_type::ApiType::apply_defaults(self);
        let mut errors = FieldErrors::default();
        self.validate(&FieldPath::root(), &mut errors);
        errors
    }

    fn validate_update(&self, old: &dyn DynObject, errs: &mut FieldErrors) {
        if let Some(old) = old.as_any().downcast_ref::<T>() {
            Resource::validate_update(self, old, errs);
        }
    }

    fn prepare_create(&mut self) {
        Resource::prepare_create(self);
    }

    fn prepare_update(&mut self, subresource: Option<&str>, old: &dyn DynObject) {
        let Some(old) = old.as_any().downcast_ref::<T>() else {
            return;
        };
        match subresource {
            None => Resource::prepare_update(self, old),
            Some(name) => Resource::prepare_subresource_update(self, name, old),
        }
    }

    fn validate_subresource_update(
        &self,
        subresource: &str,
        old: &dyn DynObject,
        errs: &mut FieldErrors,
    ) {
        if let Some(old) = old.as_any().downcast_ref::<T>() {
            Resource::validate_subresource_update(self, subresource, old, errs);
        }
    }

    fn warnings(&self, old: Option<&dyn DynObject>) -> Vec<String> {
        let old = old.and_then(|o| o.as_any().downcast_ref::<T>());
        Resource::warnings(self, old)
    }

    fn answer(&mut self) {
        Resource::answer(self);
    }

    fn reset_status(&mut self) {
        Resource::reset_status(self);
    }

    fn copy_status_from(&mut self, other: &dyn DynObject) {
        if let Some(other) = other.as_any().downcast_ref::<T>() {
            Resource::copy_status_from(self, other);
        }
    }

    fn spec_semantic_eq(&self, other: &dyn DynObject) -> bool {
        other
            .as_any()
            .downcast_ref::<T>()
            .is_some_and(|other| Resource::spec_semantic_eq(self, other))
    }

    fn object_eq(&self, other: &dyn DynObject) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }

    fn table_cells(&self) -> Option<Vec<Value>> {
        Resource::table_cells(self)
    }

    fn deletion_grace_period(&self, requested: Option<i64>) -> Option<i64> {
        Resource::deletion_grace_period(self, requested)
    }
}

impl dyn DynObject {
    /// The object as the kind's type, if it is one.
    pub fn downcast_ref<T: Resource>(&self) -> Option<&T> {
        self.as_any().downcast_ref()
    }

    /// The object as the kind's type, mutable, if it is one.
    pub fn downcast_mut<T: Resource>(&mut self) -> Option<&mut T> {
        self.as_any_mut().downcast_mut()
    }
}

/// The type-erased conversion of a `T` object to its hub `H`.
pub fn erased_to_hub<T, H>(object: Box<dyn DynObject>) -> Result<Box<dyn DynObject>, String>
where
    T: Resource + Convert<H>,
    H: Resource,
{
    let typed = downcast::<T>(object)?;
    Ok(Box::new(typed.convert()))
}

/// The type-erased conversion of a hub `H` object to the version `T`.
pub fn erased_from_hub<T, H>(object: Box<dyn DynObject>) -> Result<Box<dyn DynObject>, String>
where
    T: Resource,
    H: Resource + Convert<T>,
{
    let hub = downcast::<H>(object)?;
    Ok(Box::new(hub.convert()))
}

fn downcast<T: Resource>(object: Box<dyn DynObject>) -> Result<T, String> {
    let info = object.info();
    object
        .into_any()
        .downcast::<T>()
        .map(|typed| *typed)
        .map_err(|_| {
            format!(
                "cannot convert a {} {} as a {} {}",
                info.group_version,
                info.kind,
                T::INFO.group_version,
                T::INFO.kind
            )
        })
}
