//! The object a plugin sees. Compiled kinds are handled typed: a plugin
//! downcasts to the kind's type (as upstream's plugins assert `*api.Pod`).
//! A plugin that works on the object's JSON form asks for it, and the form is
//! made once and shared by the plugins after it, until one asks for the
//! type again; a request whose plugins all work typed never converts.

#[cfg(test)]
use std::cell::Cell;
use std::sync::OnceLock;

use kapi_runtime::Resource;
use kapi_runtime::scheme::KindEntry;
use serde_json::Value;

use crate::api_error::{ApiError, ApiResult};
use crate::body::{Input, Object};

#[cfg(test)]
thread_local! {
    /// How many JSON forms of admitted objects this thread made.
    static JSON_FORMS: Cell<usize> = const { Cell::new(0) };
}

/// How many JSON forms of admitted objects the current thread has made: a
/// test's way to see that a request's plugins all worked typed.
#[cfg(test)]
pub(crate) fn json_forms_made() -> usize {
    JSON_FORMS.with(Cell::get)
}

/// Counts one JSON form made (in tests; nothing otherwise).
fn count_json_form() {
    #[cfg(test)]
    JSON_FORMS.with(|n| n.set(n.get() + 1));
}

/// The object being admitted, changeable.
pub struct Subject<'o> {
    object: &'o mut Object,
    entry: &'o KindEntry,
    /// The JSON form, when it is the latest: a plugin changed it, or may.
    json: Option<Value>,
}

impl<'o> Subject<'o> {
    /// The object of `entry`'s kind about to be written.
    pub fn new(object: &'o mut Object, entry: &'o KindEntry) -> Subject<'o> {
        Subject {
            object,
            entry,
            json: None,
        }
    }

    /// The object, typed (decoded again from the JSON form if a plugin
    /// worked on that).
    pub fn object(&mut self) -> ApiResult<&mut Object> {
        if let Some(json) = self.json.take() {
            *self.object = Input::from_value(self.entry, json)?.object;
        }
        Ok(self.object)
    }

    /// The object as the kind's type `T`; `None` for another kind.
    pub fn downcast_mut<T: Resource>(&mut self) -> ApiResult<Option<&mut T>> {
        Ok(self.object()?.downcast_mut())
    }

    /// The object's JSON form (`kind`, `apiVersion`, `metadata`...), for a
    /// plugin that works on JSON.
    pub fn json_mut(&mut self) -> ApiResult<&mut Value> {
        if self.json.is_none() {
            count_json_form();
            self.json = Some(self.object.to_value().map_err(ApiError::internal)?);
        }
        match &mut self.json {
            Some(json) => Ok(json),
            None => Err(ApiError::internal("the object's JSON form went missing")),
        }
    }

    /// Ends the phase: the object holds every plugin's change.
    pub fn finish(mut self) -> ApiResult<()> {
        self.object().map(|_| ())
    }
}

/// An object a plugin only reads (the object being validated, the stored
/// one on an update).
pub struct View<'o> {
    object: &'o Object,
    json: OnceLock<Result<Value, String>>,
}

impl<'o> View<'o> {
    /// A view of `object`.
    pub fn new(object: &'o Object) -> View<'o> {
        View {
            object,
            json: OnceLock::new(),
        }
    }

    /// The object, typed.
    pub fn object(&self) -> &'o Object {
        self.object
    }

    /// The object as the kind's type `T`; `None` for another kind.
    pub fn downcast_ref<T: Resource>(&self) -> Option<&'o T> {
        self.object.downcast_ref()
    }

    /// The object's JSON form, made on first use.
    pub fn json(&self) -> ApiResult<&Value> {
        self.json
            .get_or_init(|| {
                count_json_form();
                self.object.to_value()
            })
            .as_ref()
            .map_err(ApiError::internal)
    }
}
