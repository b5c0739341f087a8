use thiserror::Error;

/// Errors of the storage layer; translated to a Kubernetes `Status` in exactly one
/// place of the server (like k8s.io/apiserver's storage errors).
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum StorageError {
    /// The key does not exist.
    #[error("key not found: {0}")]
    NotFound(String),
    /// The key already exists (create).
    #[error("key already exists: {0}")]
    AlreadyExists(String),
    /// The key's revision differs from the expected one.
    #[error("revision conflict on key: {0}")]
    Conflict(String),
    /// The requested revision is older than the compacted revision.
    #[error("revision {requested} has been compacted (oldest is {compacted})")]
    Expired { requested: u64, compacted: u64 },
    /// The requested revision is newer than the store's current revision.
    #[error("revision {requested} is newer than the current revision {current}")]
    TooLargeRevision { requested: u64, current: u64 },
    /// The backend could not be reached or failed.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// Stored data could not be read.
    #[error("storage corrupt: {0}")]
    Internal(String),
}
