//! Auditing, as kube-apiserver's: every request gets an `Audit-Id` (the
//! client's `Audit-ID` header, else a new UUID) echoed in the answer; with
//! `--audit-policy-file` and `--audit-log-path`, the requests the policy
//! picks are written as JSON lines of audit.k8s.io/v1 Events — who (and as
//! whom), what, from where, the answer's status, the authorizer's decision,
//! and at the Request and RequestResponse levels the objects — at the stages
//! the policy keeps (RequestReceived, ResponseStarted for watches,
//! ResponseComplete).
//!
//! The filter runs right after authentication, as upstream's; the
//! impersonation and authorization filters after it record what they
//! decide in the request's [`Context`]. A request whose credentials are
//! refused is written at ResponseStarted with an empty user, as upstream's
//! failed-authentication audit.

pub mod log;
pub mod policy;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

pub use log::{Log, LogOptions};
pub use policy::{Decision, Level, Policy, Stage};

use crate::authz::Target;
use crate::registry::Registry;
use crate::request_info::RequestInfo;
use crate::user::UserInfo;

/// The header carrying a request's audit ID.
pub const AUDIT_ID: &str = "audit-id";

/// The policy and the log.
pub struct Auditor {
    policy: Policy,
    log: Log,
}

impl std::fmt::Debug for Auditor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auditor").finish_non_exhaustive()
    }
}

impl Auditor {
    /// An auditor writing what `policy` picks to `log`.
    pub fn new(policy: Policy, log: Log) -> Auditor {
        Auditor { policy, log }
    }

    fn write(&self, event: &Event<'_>) {
        match serde_json::to_vec(event) {
            Ok(mut line) => {
                line.push(b'\n');
                self.log.write(&line);
            }
            Err(e) => tracing::warn!(error = %e, "an audit event did not encode"),
        }
    }
}

/// What the filters after the audit filter add to a request's events.
#[derive(Debug, Default)]
pub struct Context {
    /// The level the policy gave the request.
    pub level: Level,
    /// The user the request acts as, when it impersonates one.
    pub impersonated: Option<UserInfo>,
    /// Annotations (`authorization.k8s.io/decision`...).
    pub annotations: BTreeMap<Cow<'static, str>, String>,
}

/// A request's [`Context`], shared by the filters.
pub type Shared = Arc<Mutex<Context>>;

/// Records the authorizer's decision in the request's audit context, if it
/// is audited.
pub fn record_decision(request: &Request, allowed: bool, reason: &str) {
    if let Some(context) = request.extensions().get::<Shared>() {
        let mut context = context.lock().unwrap_or_else(PoisonError::into_inner);
        let decision = if allowed { "allow" } else { "forbid" };
        context
            .annotations
            .insert("authorization.k8s.io/decision".into(), decision.to_owned());
        context
            .annotations
            .insert("authorization.k8s.io/reason".into(), reason.to_owned());
    }
}

/// Whether the request is audited (so the authorizer's reason is wanted).
pub fn audited(request: &Request) -> bool {
    request.extensions().get::<Shared>().is_some()
}

/// Records the impersonated user in the request's audit context.
pub fn record_impersonation(request: &Request, user: &UserInfo) {
    if let Some(context) = request.extensions().get::<Shared>() {
        let mut context = context.lock().unwrap_or_else(PoisonError::into_inner);
        context.impersonated = Some(user.clone());
    }
}

/// The request's audit ID: the client's, else a new one.
pub fn audit_id(headers: &HeaderMap) -> HeaderValue {
    headers
        .get(AUDIT_ID)
        .filter(|id| !id.is_empty())
        .cloned()
        .unwrap_or_else(|| {
            let id = uuid::Uuid::new_v4().to_string();
            HeaderValue::from_str(&id).unwrap_or(HeaderValue::from_static("unknown"))
        })
}

fn with_id(mut response: Response, id: HeaderValue) -> Response {
    response.headers_mut().insert(AUDIT_ID, id);
    response
}

/// Serves `request` with its audit events, as the audit filter (after
/// authentication) does; `registry` names the kinds and reads bodies.
pub async fn serve(
    auditor: Option<&Arc<Auditor>>,
    registry: &Registry,
    mut request: Request,
    next: Next,
) -> Response {
    let id = audit_id(request.headers());
    // The ID goes on with the request (to a server it is passed on to).
    request.headers_mut().insert(AUDIT_ID, id.clone());
    let Some(auditor) = auditor else {
        return with_id(next.run(request).await, id);
    };
    let user = crate::user::user_of(&request);
    let described = Described::of(&request);
    let decision = auditor
        .policy
        .decide(&user, &described.verb, &described.target());
    if decision.level == Level::None {
        return with_id(next.run(request).await, id);
    }
    let mut base = Base::new(&request, &id, &decision, described, User::of(&user));
    // What authentication noted (a legacy token's use) is in every event.
    let mut first = Context {
        level: decision.level,
        ..Context::default()
    };
    if let Some(notes) = request.extensions().get::<Arc<crate::authn::Notes>>() {
        first.annotations.extend(
            notes
                .annotations
                .iter()
                .map(|(key, value)| (Cow::Borrowed(*key), value.clone())),
        );
    }
    if decision.writes(Stage::RequestReceived) {
        auditor.write(&base.event(Stage::RequestReceived, None, &first));
    }
    let context: Shared = Arc::new(Mutex::new(first));
    request.extensions_mut().insert(context.clone());
    // The kind addressed, to read protobuf bodies and name kinds.
    let scheme = registry.scheme();
    let entry = base.described.resource.as_ref().and_then(|r| {
        let group = r.api_group.as_deref().unwrap_or_default();
        scheme.get(group, &r.api_version, &r.resource)
    });
    // The request's object, for the levels that keep it.
    let mut request_object = None;
    if decision.level >= Level::Request && has_body(request.method()) {
        let (parts, body) = request.into_parts();
        let bytes = match crate::body::read_body(&parts.headers, body).await {
            Ok(bytes) => bytes,
            Err(e) => return with_id(e.into_response(), id),
        };
        // A subresource's body is another kind (an Eviction, a Scale...).
        let main = base
            .described
            .resource
            .as_ref()
            .is_some_and(|r| r.subresource.is_none());
        request_object = request_object_of(&bytes, &parts.headers, entry.filter(|_| main));
        if let Some(object) = &mut request_object {
            base.described.name_from(object);
            let kind = entry.map(|e| (e.info.kind, e.info.group_version));
            shape_request_object(object, &base.described, kind);
        }
        request = Request::from_parts(parts, Body::from(bytes));
    }
    let response = next.run(request).await;
    let code = response.status();
    let watch = base.described.verb == "watch" && code == StatusCode::OK;
    if watch {
        // A watch is written when its answer starts and when it ends.
        let parts = Parts::new(code, None, request_object);
        let started = {
            let context = context.lock().unwrap_or_else(PoisonError::into_inner);
            base.event(Stage::ResponseStarted, Some(&parts), &context)
        };
        if decision.writes(Stage::ResponseStarted) {
            auditor.write(&started);
        }
        drop(started);
        let (head, body) = response.into_parts();
        let end = Ending {
            auditor: auditor.clone(),
            base,
            parts,
            context,
            write: decision.writes(Stage::ResponseComplete),
        };
        let body = Body::new(Watched {
            body,
            end: Some(end),
        });
        return with_id(Response::from_parts(head, body), id);
    }
    if !decision.writes(Stage::ResponseComplete) {
        return with_id(response, id);
    }
    // The answer's status, and its object at RequestResponse: the body is
    // read (failures are small; the level asks for the rest).
    let failed = code.as_u16() >= 400;
    let keep_response = decision.level == Level::RequestResponse;
    let (response, body) = if failed || keep_response {
        let (head, body) = response.into_parts();
        match axum::body::to_bytes(body, usize::MAX).await {
            Ok(bytes) => {
                let value = object_of(&bytes, &head.headers, entry);
                (Response::from_parts(head, Body::from(bytes)), value)
            }
            Err(e) => {
                tracing::warn!(error = %e, "reading an audited answer failed");
                (StatusCode::INTERNAL_SERVER_ERROR.into_response(), None)
            }
        }
    } else {
        (response, None)
    };
    let status = if failed { body.as_ref() } else { None };
    let mut parts = Parts::new(code, status, request_object);
    if keep_response {
        parts.response_object = body.clone();
        if base.omit_managed_fields
            && let Some(object) = &mut parts.response_object
        {
            drop_managed_fields(object);
        }
    }
    {
        let context = context.lock().unwrap_or_else(PoisonError::into_inner);
        auditor.write(&base.event(Stage::ResponseComplete, Some(&parts), &context));
    }
    with_id(response, id)
}

/// The failed-authentication event: a refused credential's 401, written at
/// ResponseStarted with an empty user (the policy is asked as for no user).
pub fn failed_authentication(
    auditor: &Auditor,
    request: &Request,
    answer: &Response,
    id: &HeaderValue,
) {
    let described = Described::of(request);
    let nobody = UserInfo::default();
    let decision = auditor
        .policy
        .decide(&nobody, &described.verb, &described.target());
    if !decision.writes(Stage::ResponseStarted) {
        return;
    }
    let base = Base::new(request, id, &decision, described, User::default());
    let unauthorized = serde_json::json!({"metadata": {}, "status": "Failure",
        "message": "Unauthorized", "reason": "Unauthorized", "code": 401});
    let parts = Parts::new(answer.status(), Some(&unauthorized), None);
    let mut event = base.event(Stage::ResponseStarted, Some(&parts), &Context::default());
    event.annotations = None;
    auditor.write(&event);
}

/// A request's object as upstream's decoder leaves it: decoded as the
/// kind, with its defaults (a patch, or a body of no kind, as it came).
fn request_object_of(
    bytes: &[u8],
    headers: &HeaderMap,
    entry: Option<&kapi_runtime::scheme::KindEntry>,
) -> Option<Value> {
    let decoded = entry.and_then(|entry| {
        let input = if is_json(headers) {
            crate::body::Input::from_json(entry, bytes).ok()?
        } else {
            crate::protobuf::decode_object(entry, bytes).ok()?
        };
        let mut object = input.object;
        object.typed_mut().apply_defaults();
        object.to_value().ok()
    });
    let patch = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.contains("patch"));
    if patch {
        return object_of(bytes, headers, None);
    }
    decoded.or_else(|| object_of(bytes, headers, entry))
}

/// A body as JSON: a JSON one read, a protobuf one of the kind decoded
/// (upstream writes objects as JSON whatever the wire spoke).
fn object_of(
    bytes: &[u8],
    headers: &HeaderMap,
    entry: Option<&kapi_runtime::scheme::KindEntry>,
) -> Option<Value> {
    if is_json(headers) {
        return serde_json::from_slice(bytes).ok();
    }
    let protobuf = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/vnd.kubernetes.protobuf"));
    if !protobuf {
        return None;
    }
    let input = crate::protobuf::decode_object(entry?, bytes).ok()?;
    input.object.to_value().ok()
}

fn has_body(method: &Method) -> bool {
    matches!(*method, Method::POST | Method::PUT | Method::PATCH)
}

/// A JSON body (one without a content type is read as JSON, as the
/// endpoints read it).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_none_or(|t| {
            t.starts_with("application/json")
                || t.ends_with("+json")
                || t.contains("json-patch")
                || t.contains("merge-patch")
        })
}

/// The request's addresses: `X-Forwarded-For`'s, `X-Real-Ip`, then the
/// peer's (upstream's `SourceIPs`).
fn source_ips(request: &Request) -> Vec<String> {
    let headers = request.headers();
    let mut ips: Vec<String> = headers
        .get("x-forwarded-for")
        .and_then(|v| v.to_str().ok())
        .into_iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|ip| ip.parse::<std::net::IpAddr>().is_ok())
        .map(str::to_owned)
        .collect();
    if let Some(real) = headers
        .get("x-real-ip")
        .and_then(|v| v.to_str().ok())
        .filter(|ip| ip.parse::<std::net::IpAddr>().is_ok())
        && !ips.iter().any(|ip| ip == real)
    {
        ips.push(real.to_owned());
    }
    if let Some(axum::extract::ConnectInfo(peer)) = request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
    {
        let peer = peer.ip().to_string();
        if !ips.contains(&peer) {
            ips.push(peer);
        }
    }
    ips
}

/// A timestamp as events write them (microseconds, UTC).
fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// What a request asks, owned for the life of its events.
#[derive(Clone, Debug)]
struct Described {
    uri: String,
    verb: String,
    resource: Option<ObjectRef>,
    path: String,
}

impl Described {
    fn of(request: &Request) -> Described {
        let uri = request.uri().path_and_query().map_or_else(
            || request.uri().path().to_owned(),
            |p| p.as_str().to_owned(),
        );
        let path = request.uri().path().to_owned();
        let info = RequestInfo::of(request);
        match info.resource() {
            Some(r) => Described {
                uri,
                verb: r.verb.as_str().to_owned(),
                resource: Some(ObjectRef {
                    resource: r.resource.to_owned(),
                    namespace: r.namespace.map(str::to_owned),
                    name: r.name.map(str::to_owned),
                    api_group: (!r.group.is_empty()).then(|| r.group.to_owned()),
                    api_version: r.version.to_owned(),
                    subresource: r.subresource.map(str::to_owned),
                }),
                path,
            },
            None => Described {
                uri,
                verb: info.method.clone().into_owned(),
                resource: None,
                path,
            },
        }
    }

    fn target(&self) -> Target<'_> {
        match &self.resource {
            Some(r) => Target::Resource {
                namespace: r.namespace.as_deref().unwrap_or_default(),
                group: r.api_group.as_deref().unwrap_or_default(),
                resource: &r.resource,
                subresource: r.subresource.as_deref().unwrap_or_default(),
                name: r.name.as_deref().unwrap_or_default(),
                fields: None,
            },
            None => Target::Path(&self.path),
        }
    }

    /// A create names its object in the body.
    fn name_from(&mut self, object: &Value) {
        if let Some(r) = &mut self.resource
            && r.name.is_none()
            && self.verb == "create"
            && r.subresource.is_none()
            && let Some(name) = object["metadata"]["name"].as_str()
        {
            r.name = Some(name.to_owned());
        }
    }
}

/// The request's object as upstream writes it after decoding: with its
/// kind and version first (a body may leave them out) and a zero creation
/// time. A patch is written as it came.
fn shape_request_object(object: &mut Value, described: &Described, kind: Option<(&str, &str)>) {
    let Value::Object(map) = object else {
        return;
    };
    if described.verb == "patch"
        || described
            .resource
            .as_ref()
            .is_some_and(|r| r.subresource.is_some())
    {
        return;
    }
    if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut)
        && !meta.contains_key("creationTimestamp")
    {
        meta.insert("creationTimestamp".to_owned(), Value::Null);
    }
    if let Some((kind, api_version)) = kind {
        let mut shaped = serde_json::Map::with_capacity(map.len() + 2);
        let kind = map.remove("kind").unwrap_or_else(|| Value::from(kind));
        let version = map
            .remove("apiVersion")
            .unwrap_or_else(|| Value::from(api_version));
        shaped.insert("kind".to_owned(), kind);
        shaped.insert("apiVersion".to_owned(), version);
        shaped.append(map);
        *map = shaped;
    }
}

/// objectRef.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ObjectRef {
    resource: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    api_group: Option<String>,
    api_version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    subresource: Option<String>,
}

/// A user as events write it.
#[derive(Clone, Debug, Default, Serialize)]
struct User {
    #[serde(skip_serializing_if = "String::is_empty")]
    username: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    uid: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    groups: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    extra: BTreeMap<String, Vec<String>>,
}

impl User {
    fn of(user: &UserInfo) -> User {
        User {
            username: user.name.clone(),
            uid: user.uid.clone(),
            groups: user.groups.clone(),
            extra: user.extra.clone(),
        }
    }
}

/// What every event of a request shares.
struct Base {
    id: String,
    level: Level,
    described: Described,
    user: User,
    source_ips: Vec<String>,
    user_agent: Option<String>,
    received: String,
    omit_managed_fields: bool,
}

/// What the answer adds.
struct Parts {
    status: Value,
    request_object: Option<Value>,
    response_object: Option<Value>,
}

impl Parts {
    /// The response status: the code alone for a success, the Status's
    /// fields for a failure.
    fn new(code: StatusCode, failure: Option<&Value>, request_object: Option<Value>) -> Parts {
        let mut status = serde_json::Map::new();
        status.insert("metadata".to_owned(), serde_json::json!({}));
        if let Some(failure) = failure.filter(|f| f["kind"] == "Status" || f["status"].is_string())
        {
            for field in ["status", "message", "reason", "details"] {
                if let Some(value) = failure.get(field) {
                    status.insert(field.to_owned(), value.clone());
                }
            }
        }
        status.insert("code".to_owned(), Value::from(code.as_u16()));
        Parts {
            status: Value::Object(status),
            request_object,
            response_object: None,
        }
    }
}

/// One audit.k8s.io/v1 Event, in upstream's field order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Event<'a> {
    kind: &'static str,
    api_version: &'static str,
    level: &'static str,
    #[serde(rename = "auditID")]
    audit_id: &'a str,
    stage: &'static str,
    #[serde(rename = "requestURI")]
    request_uri: &'a str,
    verb: &'a str,
    user: &'a User,
    #[serde(skip_serializing_if = "Option::is_none")]
    impersonated_user: Option<User>,
    #[serde(rename = "sourceIPs", skip_serializing_if = "Vec::is_empty")]
    source_ips: &'a Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_agent: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    object_ref: Option<&'a ObjectRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_status: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_object: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_object: Option<&'a Value>,
    request_received_timestamp: &'a str,
    stage_timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<BTreeMap<Cow<'static, str>, String>>,
}

impl Base {
    /// What `request`'s events share, received now.
    fn new(
        request: &Request,
        id: &HeaderValue,
        decision: &Decision,
        described: Described,
        user: User,
    ) -> Base {
        Base {
            id: id.to_str().unwrap_or_default().to_owned(),
            level: decision.level,
            described,
            user,
            source_ips: source_ips(request),
            user_agent: request
                .headers()
                .get(axum::http::header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            received: now(),
            omit_managed_fields: decision.omit_managed_fields,
        }
    }

    fn event<'a>(&'a self, stage: Stage, parts: Option<&'a Parts>, context: &Context) -> Event<'a> {
        let objects = self.level >= Level::Request;
        Event {
            kind: "Event",
            api_version: "audit.k8s.io/v1",
            level: self.level.as_str(),
            audit_id: &self.id,
            stage: stage.as_str(),
            request_uri: &self.described.uri,
            verb: &self.described.verb,
            user: &self.user,
            impersonated_user: context.impersonated.as_ref().map(User::of),
            source_ips: &self.source_ips,
            user_agent: self.user_agent.as_deref(),
            object_ref: self.described.resource.as_ref(),
            response_status: parts.map(|p| &p.status),
            request_object: parts
                .and_then(|p| p.request_object.as_ref())
                .filter(|_| objects),
            response_object: parts
                .and_then(|p| p.response_object.as_ref())
                .filter(|_| self.level == Level::RequestResponse),
            request_received_timestamp: &self.received,
            stage_timestamp: if stage == Stage::RequestReceived {
                self.received.clone()
            } else {
                now()
            },
            annotations: (!context.annotations.is_empty()).then(|| context.annotations.clone()),
        }
    }
}

fn drop_managed_fields(object: &mut Value) {
    if let Some(meta) = object["metadata"].as_object_mut() {
        meta.remove("managedFields");
    }
    if let Some(items) = object["items"].as_array_mut() {
        for item in items {
            if let Some(meta) = item["metadata"].as_object_mut() {
                meta.remove("managedFields");
            }
        }
    }
}

/// What a watch's end writes.
struct Ending {
    auditor: Arc<Auditor>,
    base: Base,
    parts: Parts,
    context: Shared,
    write: bool,
}

/// A watch's body, which writes the ResponseComplete event when it ends
/// (or the client goes away).
struct Watched {
    body: Body,
    end: Option<Ending>,
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(end) = self.end.take()
            && end.write
        {
            let context = end.context.lock().unwrap_or_else(PoisonError::into_inner);
            end.auditor.write(
                &end.base
                    .event(Stage::ResponseComplete, Some(&end.parts), &context),
            );
        }
    }
}

impl http_body::Body for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
