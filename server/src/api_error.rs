//! The one mapping from failures to Kubernetes `Status` responses
//! (k8s.io/apimachinery/pkg/api/errors): every error leaves the server through here.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kapi_runtime::meta::{Status, StatusCause, StatusDetails};
use kapi_runtime::proto::Message;
use kapi_runtime::validation::FieldErrors;
use kapi_storage::StorageError;

/// A failed request: a `Status` and its HTTP code.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError(pub Box<Status>, pub Vec<String>);

/// The resource a request is about, for messages like `deployments.apps "x"`.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    /// API group.
    pub group: &'a str,
    /// Plural resource.
    pub resource: &'a str,
    /// Object name, if any.
    pub name: &'a str,
}

impl Target<'static> {
    /// No particular resource (errors whose message does not name one).
    pub const NONE: Target<'static> = Target {
        group: "",
        resource: "",
        name: "",
    };
}

impl Target<'_> {
    fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.resource.to_owned()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }

    fn details(&self) -> StatusDetails {
        StatusDetails {
            name: (!self.name.is_empty()).then(|| self.name.to_owned()),
            group: (!self.group.is_empty()).then(|| self.group.to_owned()),
            kind: Some(self.resource.to_owned()),
            ..StatusDetails::default()
        }
    }
}

impl ApiError {
    fn new(
        code: u16,
        reason: &str,
        message: impl Into<String>,
        details: Option<StatusDetails>,
    ) -> ApiError {
        let mut status = Status::failure(i32::from(code), reason, message);
        status.details = details;
        ApiError(Box::new(status), Vec::new())
    }

    /// The error with the warnings the request gathered before it failed
    /// (upstream answers them on errors too).
    pub fn with_warnings(mut self, warnings: &[String]) -> ApiError {
        self.1.extend_from_slice(warnings);
        self
    }

    /// 404 `configmaps "x" not found`.
    pub fn not_found(t: Target<'_>) -> ApiError {
        let msg = format!("{} {:?} not found", t.qualified(), t.name);
        ApiError::new(404, "NotFound", msg, Some(t.details()))
    }

    /// 404 for a path that names nothing the server serves.
    pub fn no_route() -> ApiError {
        let details = StatusDetails::default();
        ApiError::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
            Some(details),
        )
    }

    /// 409 `configmaps "x" already exists`.
    pub fn already_exists(t: Target<'_>) -> ApiError {
        let msg = format!("{} {:?} already exists", t.qualified(), t.name);
        ApiError::new(409, "AlreadyExists", msg, Some(t.details()))
    }

    /// 409 Conflict with the standard optimistic-concurrency message.
    pub fn conflict_modified(t: Target<'_>) -> ApiError {
        ApiError::conflict(
            t,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 `Operation cannot be fulfilled on configmaps "x": <why>`.
    pub fn conflict(t: Target<'_>, why: &str) -> ApiError {
        let msg = format!(
            "Operation cannot be fulfilled on {} {:?}: {why}",
            t.qualified(),
            t.name
        );
        ApiError::new(409, "Conflict", msg, Some(t.details()))
    }

    /// 409 Conflict of a server-side apply: one `FieldManagerConflict`
    /// cause per field another manager owns (`NewApplyConflict`).
    pub fn apply_conflict(message: String, causes: Vec<(String, String)>) -> ApiError {
        let causes = causes
            .into_iter()
            .map(|(message, field)| StatusCause {
                reason: Some("FieldManagerConflict".to_owned()),
                message: Some(message),
                field: Some(field),
            })
            .collect();
        let details = StatusDetails {
            causes: Some(causes),
            ..StatusDetails::default()
        };
        ApiError::new(409, "Conflict", message, Some(details))
    }

    /// 422 `ConfigMap "x" is invalid: <field errors>` with one cause per error.
    pub fn invalid(group: &str, kind: &str, name: &str, errors: &FieldErrors) -> ApiError {
        // `Deployment.apps "x"`, `ConfigMap "x"`: the kind qualified by its group.
        let qualified = if group.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind}.{group}")
        };
        let msg = format!("{qualified} {name:?} is invalid: {}", errors.summary());
        let causes = errors
            .0
            .iter()
            .map(|e| StatusCause {
                reason: Some(e.kind.reason().to_owned()),
                message: Some(e.message.clone()),
                field: Some(e.path.to_string()),
            })
            .collect();
        let details = StatusDetails {
            name: (!name.is_empty()).then(|| name.to_owned()),
            group: (!group.is_empty()).then(|| group.to_owned()),
            kind: Some(kind.to_owned()),
            causes: Some(causes),
            ..StatusDetails::default()
        };
        ApiError::new(422, "Invalid", msg, Some(details))
    }

    /// 422 for a JSON patch that cannot be applied (a failed `test`, a
    /// missing path): k8s.io/apiserver's generic 422, which says no more.
    pub fn unprocessable_patch() -> ApiError {
        ApiError::new(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
            Some(StatusDetails::default()),
        )
    }

    /// 422 for a patch whose result is no valid object: the patched object
    /// (`patched`, its JSON text) is named, as upstream does.
    pub fn invalid_patch_result(patched: &str, why: &str) -> ApiError {
        let mut errs = FieldErrors::default();
        errs.invalid(
            kapi_runtime::validation::FieldPath::new("patch"),
            patched,
            why,
        );
        ApiError::invalid("", "", "", &errs)
    }

    /// 403 Forbidden.
    pub fn forbidden(t: Target<'_>, why: &str) -> ApiError {
        let msg = format!("{} {:?} is forbidden: {why}", t.qualified(), t.name);
        ApiError::new(403, "Forbidden", msg, Some(t.details()))
    }

    /// 403 Forbidden by authorization: `why` the user may not act on
    /// `resource` of `group` (named `name`, or `""` for a collection), or on
    /// a path (`resource` empty), in upstream's words.
    pub fn unauthorized_action(group: &str, resource: &str, name: &str, why: &str) -> ApiError {
        if resource.is_empty() {
            return ApiError::new(403, "Forbidden", format!("forbidden: {why}"), None);
        }
        let target = Target {
            group,
            resource,
            name,
        };
        if !name.is_empty() {
            return ApiError::forbidden(target, why);
        }
        let message = format!("{} is forbidden: {why}", target.qualified());
        ApiError::new(403, "Forbidden", message, Some(target.details()))
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "BadRequest", message, None)
    }

    /// 405 MethodNotAllowed, with why and what.
    pub fn method_not_allowed_because(message: &str, details: StatusDetails) -> ApiError {
        ApiError::new(405, "MethodNotAllowed", message, Some(details))
    }

    /// 405 MethodNotAllowed with upstream's generic message.
    pub fn method_not_allowed() -> ApiError {
        let msg = "the server does not allow this method on the requested resource";
        ApiError::new(405, "MethodNotAllowed", msg, Some(StatusDetails::default()))
    }

    /// 406 NotAcceptable. kube-apiserver 1.32 lists protobuf even for a custom
    /// resource, which it then serves only as JSON (checked against a CRD).
    pub fn not_acceptable() -> ApiError {
        let msg = "only the following media types are accepted: application/json, \
                   application/yaml, application/vnd.kubernetes.protobuf";
        ApiError::new(406, "NotAcceptable", msg, None)
    }

    /// 406 for a non-resource path served only as JSON (`/version`), in the words
    /// kube-apiserver uses there.
    pub fn not_acceptable_json_only() -> ApiError {
        let msg = "406: Not Acceptable\n\nAvailable representations: application/json";
        ApiError::new(406, "NotAcceptable", msg, None)
    }

    /// 410 Expired.
    pub fn expired(message: impl Into<String>) -> ApiError {
        ApiError::new(410, "Expired", message, None)
    }

    /// 413 RequestEntityTooLarge.
    pub fn too_large(limit: usize) -> ApiError {
        let msg = format!("Request entity too large: limit is {limit}");
        ApiError::new(413, "RequestEntityTooLarge", msg, None)
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(message: impl Into<String>) -> ApiError {
        ApiError::new(415, "UnsupportedMediaType", message, None)
    }

    /// 500 InternalError.
    /// 500 with `message` alone (no reason, no details): how upstream
    /// answers an error it passes through as it is, such as a failed
    /// conversion webhook.
    /// 415 as k8s.io/apiserver answers a content type it never routes
    /// (`415: Unsupported Media Type`, empty details).
    pub fn unsupported_media_type_bare() -> ApiError {
        ApiError::new(
            415,
            "UnsupportedMediaType",
            "415: Unsupported Media Type",
            Some(StatusDetails::default()),
        )
    }

    pub fn plain_internal(message: impl Into<String>) -> ApiError {
        ApiError::new(500, "", message, None)
    }

    pub fn internal(message: impl std::fmt::Display) -> ApiError {
        let msg = format!("Internal error occurred: {message}");
        let details = StatusDetails {
            causes: Some(vec![StatusCause {
                message: Some(message.to_string()),
                ..StatusCause::default()
            }]),
            ..StatusDetails::default()
        };
        ApiError::new(500, "InternalError", msg, Some(details))
    }

    /// 500 without a reason, as a plain Go error from a storage-less kind's REST
    /// reaches the client (ComponentStatus's `Component not found: x`).
    pub fn plain(message: impl Into<String>) -> ApiError {
        ApiError::new(500, "", message, None)
    }

    /// 429 TooManyRequests, with a hint in seconds for the retry (0: none)
    /// and the causes.
    pub fn too_many_requests(
        message: impl Into<String>,
        retry_after_seconds: i32,
        causes: Vec<StatusCause>,
    ) -> ApiError {
        let details = StatusDetails {
            causes: (!causes.is_empty()).then_some(causes),
            retry_after_seconds: (retry_after_seconds > 0).then_some(retry_after_seconds),
            ..StatusDetails::default()
        };
        ApiError::new(429, "TooManyRequests", message, Some(details))
    }

    /// 401 Unauthorized: credentials no authenticator accepts.
    pub fn unauthorized() -> ApiError {
        ApiError::new(401, "Unauthorized", "Unauthorized", None)
    }

    /// 503 ServiceUnavailable.
    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(503, "ServiceUnavailable", message, None)
    }

    /// 504 Timeout: the request did not finish within the server's limit.
    pub fn timeout(message: impl Into<String>) -> ApiError {
        ApiError::new(504, "Timeout", message, Some(StatusDetails::default()))
    }

    /// 504 for a resourceVersion the store has not reached yet.
    pub fn too_large_resource_version(requested: u64, current: u64) -> ApiError {
        let msg = format!("Too large resource version: {requested}, current: {current}");
        let details = StatusDetails {
            causes: Some(vec![StatusCause {
                reason: Some("ResourceVersionTooLarge".into()),
                message: Some(msg.clone()),
                field: None,
            }]),
            retry_after_seconds: Some(1),
            ..StatusDetails::default()
        };
        ApiError::new(504, "Timeout", msg, Some(details))
    }

    /// Translates a storage error about `t` (the one storage -> API mapping).
    pub fn from_storage(err: StorageError, t: Target<'_>) -> ApiError {
        match err {
            StorageError::NotFound(_) => ApiError::not_found(t),
            StorageError::AlreadyExists(_) => ApiError::already_exists(t),
            StorageError::Conflict(_) => ApiError::conflict_modified(t),
            StorageError::Expired {
                requested,
                compacted,
            } => ApiError::expired(format!(
                "too old resource version: {requested} ({compacted})"
            )),
            StorageError::TooLargeRevision { requested, current } => {
                ApiError::too_large_resource_version(requested, current)
            }
            StorageError::Unavailable(msg) => ApiError::unavailable(msg),
            StorageError::Internal(msg) => ApiError::internal(msg),
        }
    }

    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        self.0
            .code
            .and_then(|c| u16::try_from(c).ok())
            .unwrap_or(500)
    }

    /// `Retry-After`, from the details' hint, as kube-apiserver sets it.
    fn retry_after(&self, response: &mut Response) {
        let seconds = self.0.details.as_ref().and_then(|d| d.retry_after_seconds);
        if let Some(seconds) = seconds.filter(|s| *s > 0) {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
    }
}

impl ApiError {
    /// The response as a protobuf `Status`, for clients that prefer protobuf.
    pub fn into_protobuf_response(self) -> Response {
        let code = StatusCode::from_u16(self.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = kapi_runtime::proto::envelope::encode("v1", "Status", &self.0.encode_to_vec());
        let mut response = (code, body).into_response();
        self.retry_after(&mut response);
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(kapi_runtime::proto::envelope::MEDIA_TYPE),
        );
        response
    }
}

/// A plain-text answer as Go's `http.Error` writes it (`text/plain`,
/// `nosniff`).
pub fn plain_text(code: StatusCode, body: String) -> Response {
    let mut response = (code, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        // Go's json.Encoder ends the body with a newline; clients compare texts.
        let mut body = serde_json::to_vec(&self.0).unwrap_or_default();
        body.push(b'\n');
        let mut response = (code, body).into_response();
        self.retry_after(&mut response);
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        for warning in &self.1 {
            if let Some(value) = warning_header(warning) {
                response.headers_mut().append("warning", value);
            }
        }
        response
    }
}

/// A `Warning` header's value (`299 - "text"`, as kube-apiserver writes
/// them: `"` and `\` escaped, UTF-8 as it is); `None` for a text upstream
/// refuses to send (one with control characters).
pub fn warning_header(warning: &str) -> Option<HeaderValue> {
    if warning.chars().any(char::is_control) {
        return None;
    }
    let mut text = String::with_capacity(warning.len() + 8);
    text.push_str("299 - \"");
    for c in warning.chars() {
        if c == '"' || c == '\\' {
            text.push('\\');
        }
        text.push(c);
    }
    text.push('"');
    HeaderValue::from_bytes(text.as_bytes()).ok()
}

/// The text of a `Warning` header this server wrote.
fn warning_text(value: &HeaderValue) -> Option<String> {
    let value = std::str::from_utf8(value.as_bytes()).ok()?;
    let quoted = value.strip_prefix("299 - \"")?.strip_suffix('"')?;
    let mut text = String::with_capacity(quoted.len());
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        text.push(if c == '\\' { chars.next()? } else { c });
    }
    Some(text)
}

/// Upstream's bound on the warnings of one answer: 4096 characters in all;
/// past it, each text is cut to 256 and texts are added while room is left.
const WARNING_TOTAL_RUNES: usize = 4 * 1024;
const WARNING_ITEM_RUNES: usize = 256;

/// The `Warning` headers of an answer with the request's `noted` warnings
/// added, as kube-apiserver's warning recorder writes them: each text once,
/// in the order first given, and cut down past upstream's bound.
pub fn merge_warnings(headers: &mut axum::http::HeaderMap, noted: &[String]) {
    let written = headers.get_all(header::WARNING).iter().count();
    if noted.is_empty() && written <= 1 {
        return;
    }
    let texts: Vec<String> = headers
        .get_all(header::WARNING)
        .iter()
        .filter_map(warning_text)
        .chain(noted.iter().cloned())
        .collect();
    headers.remove(header::WARNING);
    for value in recorded_warnings(texts)
        .iter()
        .filter_map(|t| warning_header(t))
    {
        headers.append(header::WARNING, value);
    }
}

/// What upstream's recorder keeps of `texts`, added in order.
fn recorded_warnings(texts: Vec<String>) -> Vec<String> {
    let cut = |text: &str| -> String { text.chars().take(WARNING_ITEM_RUNES).collect() };
    let mut seen = std::collections::HashSet::new();
    let mut ordered: Vec<String> = Vec::new();
    let mut out: Vec<String> = Vec::new();
    let (mut written, mut truncating) = (0usize, false);
    for text in texts {
        if text.is_empty() || (truncating && written >= WARNING_TOTAL_RUNES) {
            continue;
        }
        if !seen.insert(text.clone()) {
            continue;
        }
        ordered.push(text.clone());
        let mut shown = text;
        let mut runes = shown.chars().count();
        if truncating && runes > WARNING_ITEM_RUNES {
            shown = cut(&shown);
            runes = WARNING_ITEM_RUNES;
        }
        if warning_header(&shown).is_none() {
            continue;
        }
        if written + runes <= WARNING_TOTAL_RUNES || truncating {
            written += runes;
            out.push(shown);
            continue;
        }
        truncating = true;
        written = 0;
        out.clear();
        for text in &ordered {
            let shown = cut(text);
            if warning_header(&shown).is_some() {
                written += shown.chars().count();
                out.push(shown);
            }
        }
    }
    out
}

/// The result type of handlers and the registry.
pub type ApiResult<T> = Result<T, ApiError>;

/// The plain-text not-found kube-apiserver's handler chain ends in, for
/// paths no API group serves (what a custom resource's group answers for
/// what it does not serve).
pub fn page_not_found() -> axum::response::Response {
    use axum::response::IntoResponse as _;
    (
        axum::http::StatusCode::NOT_FOUND,
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; charset=utf-8",
        )],
        "404 page not found\n",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_written_once_each_and_cut_past_upstreams_bound() {
        let mut headers = axum::http::HeaderMap::new();
        for _ in 0..300 {
            headers.append(
                header::WARNING,
                warning_header("duplicate field \"data\"").unwrap(),
            );
        }
        merge_warnings(&mut headers, &["from a webhook".to_owned(), String::new()]);
        let values: Vec<_> = headers.get_all(header::WARNING).iter().collect();
        assert_eq!(values.len(), 2);
        assert_eq!(values[0], r#"299 - "duplicate field \"data\"""#);
        assert_eq!(values[1], r#"299 - "from a webhook""#);
        // 20 texts of 300 characters: the 14th passes 4096, so the 14 are cut
        // to 256 characters, and two more fit before 4096 are written.
        let long: Vec<String> = (0..20)
            .map(|i| format!("{i:03}{}", "x".repeat(297)))
            .collect();
        let kept = recorded_warnings(long);
        assert_eq!(kept.len(), 16);
        assert!(kept.iter().all(|t| t.chars().count() == 256));
        assert_eq!(warning_header("a\nb"), None);
        assert_eq!(
            warning_header("é"),
            Some(HeaderValue::from_bytes("299 - \"é\"".as_bytes()).unwrap())
        );
    }
}
