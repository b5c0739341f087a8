//! Reading a request's body off the wire: bounded by kube-apiserver's size
//! limit, or drained unread before an early answer.

use axum::body::Body;
use axum::http::HeaderMap;
use axum::response::Response;

use crate::api_error::{ApiError, ApiResult};

/// Largest request body accepted, as kube-apiserver's default (3 MiB).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// An early answer (a 401, a 403) to `request`, whose body nothing read:
/// the body is read first (256 KiB at most, for a second at most) and
/// dropped. Dropping an unread body resets its HTTP/2 stream, and a client
/// still sending it (curl) may then see the reset instead of the answer.
pub async fn answer_unread(request: axum::extract::Request, answer: Response) -> Response {
    const LIMIT: usize = 256 << 10;
    let drain = axum::body::to_bytes(request.into_body(), LIMIT);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), drain).await;
    answer
}

/// The body of a request, refused with a 413 past [`MAX_BODY_BYTES`] (by its
/// declared length when it has one, before anything is read).
pub async fn read_body(headers: &HeaderMap, body: Body) -> ApiResult<bytes::Bytes> {
    let declared = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|len| len > MAX_BODY_BYTES) {
        return Err(ApiError::too_large(MAX_BODY_BYTES));
    }
    axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| ApiError::too_large(MAX_BODY_BYTES))
}
