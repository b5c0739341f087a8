use serde::{Deserialize, Serialize};

/// One frame of a watch stream: `{"type":"ADDED","object":{...}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WatchEvent<T> {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The object (a Status for `ERROR`).
    pub object: T,
}
