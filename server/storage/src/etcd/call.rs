//! One etcd call, bounded in time, and the translation of etcd's answers into
//! the storage contract's types.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;

use crate::{KeyValue, StorageError};

/// Why an etcd call failed, keeping apart the two answers some callers turn
/// into their own errors (with numbers only they know).
#[derive(Debug)]
pub(super) enum Failure {
    /// etcd: "mvcc: required revision has been compacted".
    Compacted,
    /// etcd: "mvcc: required revision is a future revision".
    FutureRevision,
    /// Anything else, already translated.
    Other(StorageError),
}

impl From<Failure> for StorageError {
    fn from(failure: Failure) -> StorageError {
        match failure {
            Failure::Compacted => {
                StorageError::Unavailable("etcd: required revision has been compacted".to_owned())
            }
            Failure::FutureRevision => {
                StorageError::Unavailable("etcd: required revision is a future revision".to_owned())
            }
            Failure::Other(err) => err,
        }
    }
}

/// gRPC status codes (stable numbers of the gRPC protocol) by which etcd says
/// the request itself is wrong, so retrying it cannot help.
const REJECTED: [i32; 4] = [
    3,  // INVALID_ARGUMENT: e.g. "etcdserver: request is too large"
    7,  // PERMISSION_DENIED
    9,  // FAILED_PRECONDITION
    16, // UNAUTHENTICATED
];

/// Runs one etcd call, failing with [`StorageError::Unavailable`] when it does
/// not answer within `timeout`: without quorum etcd may hold a request until its
/// own (long) timeout, and a request of kapi must end in bounded time.
pub(super) async fn bounded<T>(
    timeout: Duration,
    call: impl Future<Output = Result<T, etcd_client::Error>>,
) -> Result<T, Failure> {
    match tokio::time::timeout(timeout, call).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(err)) => Err(classify(err)),
        Err(_) => Err(Failure::Other(StorageError::Unavailable(format!(
            "etcd did not answer within {timeout:?}"
        )))),
    }
}

/// Sorts an etcd client error into a [`Failure`].
pub(super) fn classify(err: etcd_client::Error) -> Failure {
    let etcd_client::Error::GRpcStatus(status) = &err else {
        // Transport, connection and client-side errors: the cluster could not be
        // reached; the client reconnects by itself.
        return Failure::Other(StorageError::Unavailable(format!("etcd: {err}")));
    };
    let message = status.message();
    if message.contains("required revision has been compacted") {
        Failure::Compacted
    } else if message.contains("required revision is a future revision") {
        Failure::FutureRevision
    } else if REJECTED.contains(&i32::from(status.code())) {
        Failure::Other(StorageError::Internal(format!(
            "etcd rejected the request: {message}"
        )))
    } else {
        // Unavailable, no leader, timeouts, cancellation: worth retrying later.
        Failure::Other(StorageError::Unavailable(format!("etcd: {message}")))
    }
}

/// A revision as the storage contract counts them: etcd's are `i64` and never
/// negative.
pub(super) fn revision(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// A revision to send to etcd.
pub(super) fn etcd_revision(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// The revision in a response header, which etcd always sends.
pub(super) fn header_revision(
    header: Option<&etcd_client::ResponseHeader>,
) -> Result<u64, StorageError> {
    header
        .map(|h| revision(h.revision()))
        .ok_or_else(|| StorageError::Internal("etcd response without a header".to_owned()))
}

/// Turns an etcd key-value pair into the contract's, named `key` (the caller's
/// name of it, which differs from etcd's under a prefix other than `/registry`).
pub(super) fn key_value(key: String, kv: etcd_client::KeyValue) -> KeyValue {
    let (create_revision, mod_revision) = (kv.create_revision(), kv.mod_revision());
    let (_, value) = kv.into_key_value();
    KeyValue {
        key,
        value: Bytes::from(value),
        create_revision: revision(create_revision),
        mod_revision: revision(mod_revision),
    }
}

/// An etcd key as text: kapi writes only UTF-8 keys, so anything else under
/// its prefix was written by someone else and cannot be served.
pub(super) fn key_text(key: &[u8]) -> Result<&str, StorageError> {
    std::str::from_utf8(key).map_err(|_| {
        StorageError::Internal(format!(
            "etcd key is not UTF-8: {}",
            String::from_utf8_lossy(key)
        ))
    })
}
