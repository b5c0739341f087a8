//! Label and field selectors (k8s.io/apimachinery/pkg/labels and pkg/fields):
//! no maintained crate parses Kubernetes' grammar, so they are written here.

pub mod field;
pub mod label;

use std::borrow::Cow;

use crate::body::Object;

/// A read's selectors as one test of an object.
pub type Matches<'a> = dyn Fn(&dyn Selectable) -> bool + Send + Sync + 'a;

/// What label and field selectors read of an object: a decoded object, or
/// what the watch cache keeps of one without decoding it.
pub trait Selectable {
    /// The value of the label `key`, if the object has it.
    fn label(&self, key: &str) -> Option<&str>;

    /// The text of a selectable field (`metadata.name`, `spec.nodeName`);
    /// `None` when the object leaves it out.
    fn field_text(&self, field: &str) -> Option<String>;

    /// The object itself, for what the other two do not answer (a field of
    /// another served version); `None` when it cannot be had.
    fn object(&self) -> Option<Cow<'_, Object>>;
}

impl Selectable for Object {
    fn label(&self, key: &str) -> Option<&str> {
        let labels = self.metadata().labels.as_ref()?;
        labels.get(key).map(String::as_str)
    }

    fn field_text(&self, field: &str) -> Option<String> {
        Object::field_text(self, field)
    }

    fn object(&self) -> Option<Cow<'_, Object>> {
        Some(Cow::Borrowed(self))
    }
}
