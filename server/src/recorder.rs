//! What the steps of one request note down for its answer and its audit
//! events: `Warning` texts (upstream's warning recorder) and audit
//! annotations (upstream's `AddAnnotation` on the admission attributes),
//! gathered while the request runs and written out once it is answered.

use std::sync::{Mutex, PoisonError};

/// The least audit level whose events carry an annotation (the audit
/// policy's levels, from Metadata on; a leaf's own type, so that the
/// recorder need not know the audit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    #[default]
    Metadata,
    Request,
}

/// One request's warnings and audit annotations.
#[derive(Debug, Default)]
pub struct Recorder {
    warnings: Mutex<Vec<String>>,
    /// Each with the audit level its events need to carry it.
    annotations: Mutex<Vec<(String, String, Level)>>,
}

impl Recorder {
    /// Adds a warning for the client (empty texts are dropped).
    pub fn warn(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.warnings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(text.to_owned());
    }

    /// Adds an audit annotation; a key noted before keeps its first value
    /// (upstream refuses to change one). `false` when the key was taken with
    /// another value.
    pub fn annotate(&self, key: String, value: String) -> bool {
        self.annotate_at(key, value, Level::Metadata)
    }

    /// [`Recorder::annotate`] for events of `level` or more only
    /// (upstream's `AddAnnotationWithLevel`: a webhook's patch is written
    /// from `Request` on).
    pub fn annotate_at(&self, key: String, value: String, level: Level) -> bool {
        let mut annotations = self
            .annotations
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match annotations.iter().find(|(k, _, _)| *k == key) {
            Some((_, existing, _)) => *existing == value,
            None => {
                annotations.push((key, value, level));
                true
            }
        }
    }

    /// The warnings noted so far, in order, leaving none.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The annotations noted so far, in order, each with the level its
    /// events need, leaving none.
    pub fn take_annotations(&self) -> Vec<(String, String, Level)> {
        std::mem::take(
            &mut *self
                .annotations
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}
