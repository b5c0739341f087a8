//! What the steps of one request note down for its answer and its audit
//! events: `Warning` texts (upstream's warning recorder) and audit
//! annotations (upstream's `AddAnnotation` on the admission attributes),
//! gathered while the request runs and written out once it is answered.

use std::sync::{Mutex, PoisonError};

/// One request's warnings and audit annotations.
#[derive(Debug, Default)]
pub struct Recorder {
    warnings: Mutex<Vec<String>>,
    annotations: Mutex<Vec<(String, String)>>,
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
        let mut annotations = self
            .annotations
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match annotations.iter().find(|(k, _)| *k == key) {
            Some((_, existing)) => *existing == value,
            None => {
                annotations.push((key, value));
                true
            }
        }
    }

    /// The warnings noted so far, in order, leaving none.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The annotations noted so far, in order, leaving none.
    pub fn take_annotations(&self) -> Vec<(String, String)> {
        std::mem::take(
            &mut *self
                .annotations
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}
