//! One etcd call, bounded in time, and the translation of etcd's answers into
//! the storage contract's types.

use std::error::Error;
use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

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

/// The first pause before a retry; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(20);
const MAX_PAUSE: Duration = Duration::from_millis(500);

/// Whether a call may be repeated after a failure that leaves open whether
/// etcd applied it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Repeat {
    /// Reads and other idempotent calls: retried after any transient failure.
    Safe,
    /// Writes: retried only when the failure shows etcd never got the request
    /// (a create repeated after it was applied would answer AlreadyExists).
    IfNotSent,
}

/// How a failed attempt failed, for the retry decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transience {
    /// The request never reached etcd's state machine: the connection could not
    /// be made (a member is down; the client's balancer still picks it at
    /// times), or the member refused it for having no leader (an election).
    NotSent,
    /// A connection broke mid-call, a leader changed, etcd timed out.
    Ambiguous,
    /// An answer that repeating would not change.
    Final,
}

/// Runs one etcd call, retrying transient failures (see [`Repeat`]) with a
/// growing pause, all within `timeout`: past it the call fails with
/// [`StorageError::Unavailable`]. Without quorum etcd may hold a request until
/// its own (long) timeout, and a request of kapi must end in bounded time.
///
/// Retrying is what keeps requests succeeding while one member is down or a
/// leader is being elected; the time bound is what makes them fail cleanly
/// when the cluster as a whole cannot serve.
pub(super) async fn bounded<T, F, Fut>(
    timeout: Duration,
    repeat: Repeat,
    mut attempt: F,
) -> Result<T, Failure>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, etcd_client::Error>>,
{
    let deadline = Instant::now() + timeout;
    // A read stuck on one member (say, one that just restarted and waits for
    // an election) gets a second chance on another within the same bound.
    let attempt_limit = match repeat {
        Repeat::Safe => timeout / 2,
        Repeat::IfNotSent => timeout,
    };
    let mut pause = FIRST_PAUSE;
    loop {
        let attempt_deadline = deadline.min(Instant::now() + attempt_limit);
        let err = match tokio::time::timeout_at(attempt_deadline, attempt()).await {
            Ok(Ok(answer)) => return Ok(answer),
            Ok(Err(err)) => err,
            Err(_) if attempt_deadline < deadline => continue,
            Err(_) => {
                return Err(Failure::Other(StorageError::Unavailable(format!(
                    "etcd did not answer within {timeout:?}"
                ))));
            }
        };
        let retry = match transience(&err) {
            Transience::NotSent => true,
            Transience::Ambiguous => repeat == Repeat::Safe,
            Transience::Final => false,
        };
        if !retry || Instant::now() + pause >= deadline {
            return Err(classify(&err));
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

fn transience(err: &etcd_client::Error) -> Transience {
    let status = match err {
        etcd_client::Error::GRpcStatus(status) => status,
        // The connection could not be made: nothing was sent.
        etcd_client::Error::TransportError(_) | etcd_client::Error::IoError(_) => {
            return Transience::NotSent;
        }
        // The client refused the call itself (a bad URI, TLS on http://).
        _ => return Transience::Final,
    };
    let (head, mut causes) = parts(err);
    if status.message().contains("no leader")
        || head.contains("tcp connect error")
        || causes.any(is_connect_failure)
    {
        return Transience::NotSent;
    }
    // CANCELLED, UNKNOWN, DEADLINE_EXCEEDED, ABORTED, UNAVAILABLE
    match i32::from(status.code()) {
        1 | 2 | 4 | 10 | 14 => Transience::Ambiguous,
        _ => Transience::Final,
    }
}

/// Whether an error in a chain says a connection could not be made.
fn is_connect_failure(err: &(dyn Error + 'static)) -> bool {
    if let Some(io) = err.downcast_ref::<std::io::Error>() {
        use std::io::ErrorKind::{AddrNotAvailable, ConnectionRefused, HostUnreachable};
        return matches!(
            io.kind(),
            ConnectionRefused | AddrNotAvailable | HostUnreachable
        );
    }
    err.to_string().contains("tcp connect error")
}

/// An etcd client error's own text and its causes (which tonic keeps apart:
/// its "transport error" alone does not tell a refused connection from a reset).
fn parts(err: &etcd_client::Error) -> (String, impl Iterator<Item = &(dyn Error + 'static)>) {
    let (head, source) = match err {
        etcd_client::Error::GRpcStatus(status) => (status.message().to_owned(), status.source()),
        etcd_client::Error::TransportError(e) => (e.to_string(), e.source()),
        etcd_client::Error::IoError(e) => (e.to_string(), e.source()),
        other => (other.to_string(), None),
    };
    (
        head,
        std::iter::successors(source, |e: &&(dyn Error + 'static)| (*e).source()),
    )
}

/// Sorts an etcd client error into a [`Failure`].
pub(super) fn classify(err: &etcd_client::Error) -> Failure {
    let etcd_client::Error::GRpcStatus(status) = err else {
        // Transport, connection and client-side errors: the cluster could not be
        // reached; the client reconnects by itself.
        return Failure::Other(StorageError::Unavailable(describe(err)));
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
        Failure::Other(StorageError::Unavailable(describe(err)))
    }
}

/// An error with its causes, for operators.
fn describe(err: &etcd_client::Error) -> String {
    let (head, causes) = parts(err);
    let mut text = format!("etcd: {head}");
    for cause in causes {
        let part = cause.to_string();
        // Wrappers often repeat their source's text.
        if !part.is_empty() && !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
    }
    text
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
