//! HTTP endpoints of resources: one dispatching `match` over the verb, one file per
//! verb (k8s.io/apiserver's handlers/{get,create,update,patch,delete,watch}.go).

mod action;
mod create;
mod delete;
mod get;
mod list;
mod list_body;
mod options_body;
mod patch;
mod query;
mod respond;
mod scale;
mod update;
mod watch;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use axum::Extension;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::{IntoResponse, Response};
use kapi_runtime::scheme::KindEntry;

pub use query::Query;

use crate::api_error::{ApiError, ApiResult};
use crate::body::read_body;
use crate::negotiation::{self, Format, Output};
use crate::options::Given;
use crate::recorder::Recorder;
use crate::registry::{Endpoint, FieldValidation, Input, Scope, WriteOptions};
use crate::request_info::{RequestInfo, ResourceRequest, Verb};
use crate::state::App;
use crate::user::UserInfo;

/// Everything a verb handler needs about its request.
pub struct Ctx<'a> {
    /// Server state.
    pub app: &'a App,
    /// The parsed path.
    pub req: &'a ResourceRequest,
    /// The kind served at the path, in the path's version.
    pub entry: &'a KindEntry,
    /// The same kind in its storage version (`entry` unless served through a hub).
    pub storage: &'a KindEntry,
    /// Query parameters.
    pub query: &'a Query,
    /// Request headers.
    pub headers: &'a HeaderMap,
    /// What the client accepts.
    pub output: Output,
    /// The manager of writes without `fieldManager`: the User-Agent's
    /// product.
    pub user_agent_manager: Cow<'a, str>,
    /// Who sends the request.
    pub user: &'a UserInfo,
    /// Where the request's warnings and audit annotations are noted.
    pub recorder: &'a Recorder,
    /// When the request must be answered.
    pub deadline: Instant,
}

impl Ctx<'_> {
    /// The kind and namespace addressed.
    pub fn scope(&self) -> Scope<'_> {
        Scope {
            entry: self.storage,
            served: self.entry,
            namespace: self.req.namespace.as_deref(),
        }
    }

    /// The scope of a read: as [`Ctx::scope`], except that a Table printed
    /// through the kind's hub reads the stored objects as they are (the Table
    /// embeds them in the served version), sparing them a round trip through
    /// the served version, which need not be lossless.
    pub fn read_scope(&self) -> Scope<'_> {
        let through_hub = !std::ptr::eq(crate::table::printed_as(self.entry), self.entry.info);
        if self.output.shape == crate::negotiation::Shape::Table && through_hub {
            Scope {
                served: self.storage,
                ..self.scope()
            }
        } else {
            self.scope()
        }
    }

    /// The object name from the path (verbs that need one).
    pub fn name(&self) -> &str {
        self.req.name.as_deref().unwrap_or_default()
    }

    /// The endpoint of the object a write goes through (its shape was
    /// checked: a subresource named in the path exists).
    pub fn endpoint(&self) -> Endpoint {
        match self.req.subresource.as_deref() {
            None => Endpoint::Main,
            Some("status") => Endpoint::Status,
            Some(name) => self
                .entry
                .info
                .subresource(name)
                .map_or(Endpoint::Main, Endpoint::Part),
        }
    }

    /// The options of a write.
    pub fn write_options(&self) -> ApiResult<WriteOptions<'_>> {
        let field_validation = match self.query.field_validation.as_deref() {
            None | Some("") | Some("Warn") => FieldValidation::Warn,
            Some("Strict") => FieldValidation::Strict,
            Some("Ignore") => FieldValidation::Ignore,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "fieldValidation: Unsupported value: {other:?}: supported values: \"Ignore\", \"Strict\", \"Warn\""
                )));
            }
        };
        Ok(WriteOptions {
            user: self.user,
            dry_run: self.query.dry_run()?,
            field_validation,
            manager: self.manager(),
            subresource: "",
            given: Given {
                field_manager: self.query.field_manager.as_deref(),
                field_validation: self.query.field_validation.as_deref(),
            },
            recorder: Some(self.recorder),
            deadline: Some(self.deadline),
        })
    }

    /// The request's side of a delete (its options come in the body).
    pub fn delete_options(&self) -> WriteOptions<'_> {
        WriteOptions {
            user: self.user,
            recorder: Some(self.recorder),
            deadline: Some(self.deadline),
            ..WriteOptions::default()
        }
    }

    /// Who writes: `fieldManager`, else the User-Agent's product.
    fn manager(&self) -> &str {
        match self.query.field_manager.as_deref() {
            Some(manager) if !manager.is_empty() => manager,
            _ => &self.user_agent_manager,
        }
    }

    /// The checks of `fieldManager` and `force` in a write's options
    /// (`options` names them: CreateOptions, UpdateOptions, PatchOptions),
    /// as upstream's ValidatePatchOptions and ValidateFieldManager.
    pub fn check_field_manager(&self, options: &str, apply: Option<bool>) -> ApiResult<()> {
        use kapi_runtime::validation::{FieldErrors, FieldPath};
        let manager = self.query.field_manager.as_deref().unwrap_or_default();
        let mut errors = FieldErrors::default();
        match apply {
            Some(false) if self.query.force.is_some() => {
                errors.forbidden(
                    FieldPath::new("force"),
                    "may not be specified for non-apply patch",
                );
            }
            Some(true) if manager.is_empty() => {
                errors.required(
                    FieldPath::new("fieldManager"),
                    "is required for apply patch",
                );
            }
            _ => {}
        }
        if manager.len() > 128 {
            errors.too_long(FieldPath::new("fieldManager"), 128);
        }
        // Go's %q of the value.
        struct GoQuoted<'a>(&'a str);
        impl std::fmt::Debug for GoQuoted<'_> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&kapi_structured_merge::value::go_quote(self.0))
            }
        }
        for (i, c) in manager.char_indices() {
            if c.is_control() {
                errors.invalid(
                    FieldPath::new("fieldManager"),
                    GoQuoted(manager),
                    &format!("invalid character U+{:04X} (at position {i})", c as u32),
                );
            }
        }
        if errors.is_empty() {
            return Ok(());
        }
        Err(ApiError::invalid("meta.k8s.io", options, "", &errors))
    }
}

/// The handler of every resource path.
#[allow(
    clippy::too_many_arguments,
    reason = "axum extractors, one per argument"
)]
pub async fn resource(
    State(app): State<Arc<App>>,
    user: Option<Extension<Arc<UserInfo>>>,
    info: Option<Extension<Arc<RequestInfo>>>,
    audit: Option<Extension<crate::audit::Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    // The authentication filter sets the user of every request, the first
    // filter its info.
    let user = user.map_or_else(|| Arc::new(UserInfo::anonymous()), |Extension(user)| user);
    let info = info.map_or_else(
        || Arc::new(RequestInfo::parse(&method, uri.path(), uri.query())),
        |Extension(info)| info,
    );
    let recorder = Recorder::default();
    let request = Request {
        user: &user,
        info: &info,
        headers: &headers,
        recorder: &recorder,
        deadline: Instant::now() + info.deadline(),
    };
    // Bounds the time to the response head; a watch's stream goes on after it.
    let mut response = respond(&app, &request, body).await;
    record(
        &recorder,
        audit.as_ref().map(|Extension(a)| a),
        &mut response,
    );
    app.metrics.record(method.as_str(), &headers, &response);
    response
}

/// Writes what the request's steps noted: its warnings beside the ones the
/// answer carries (each text once, as upstream's recorder keeps them), its
/// annotations into its audit events.
fn record(recorder: &Recorder, audit: Option<&crate::audit::Shared>, response: &mut Response) {
    let annotations = recorder.take_annotations();
    if let Some(audit) = audit
        && !annotations.is_empty()
    {
        let mut context = audit
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let level = context.level;
        for (key, value, needs) in annotations {
            let carried = match needs {
                crate::recorder::Level::Metadata => level >= crate::audit::Level::Metadata,
                crate::recorder::Level::Request => level >= crate::audit::Level::Request,
            };
            if carried {
                context.annotations.entry(key.into()).or_insert(value);
            }
        }
    }
    let noted = recorder.take_warnings();
    crate::api_error::merge_warnings(response.headers_mut(), &noted);
}

/// What the handler reads of its request besides the body.
struct Request<'r> {
    user: &'r UserInfo,
    info: &'r RequestInfo,
    headers: &'r HeaderMap,
    recorder: &'r Recorder,
    deadline: Instant,
}

async fn respond(app: &App, r: &Request<'_>, body: Body) -> Response {
    let headers = r.headers;
    // A `timeout` that does not parse was refused in front of every path
    // (crate::filters::deadline), except on a watch, which it does not bound.
    let bound = r.info.deadline();
    let request = dispatch(app, r, &r.info.query, body);
    let error = match tokio::time::timeout(bound, request).await {
        Ok(Ok(response)) => return response,
        Ok(Err(e)) => e,
        // kube-apiserver's words for a request cut off at its deadline.
        Err(_) => {
            ApiError::timeout("Timeout: request did not complete within the allotted timeout")
        }
    };
    // Errors travel in the client's preferred codec, as kube-apiserver sends them
    // (a 406 too, and for JSON-only kinds: a Status always has a protobuf form).
    if negotiation::prefers_protobuf(headers) {
        error.into_protobuf_response()
    } else {
        error.into_response()
    }
}

async fn dispatch(app: &App, r: &Request<'_>, query: &Query, body: Body) -> ApiResult<Response> {
    let Request {
        user,
        info,
        headers,
        recorder,
        deadline,
        ..
    } = *r;
    let req = info.resource.as_ref().ok_or_else(ApiError::no_route)?;
    // The kinds as they are when the request starts, kept to its end.
    let scheme = app.registry.scheme();
    let Some(entry) = scheme.get(&req.group, &req.version, &req.resource) else {
        // A group of custom resources (or no group at all) is served, as
        // upstream, by a handler that ends in a plain not-found.
        if !scheme
            .entries()
            .any(|e| e.info.group == req.group && !e.is_custom())
        {
            return Ok(crate::api_error::page_not_found());
        }
        return Err(ApiError::no_route());
    };
    match check_shape(entry, req) {
        Err(e) if entry.is_custom() && e.code() == 404 => {
            return Ok(crate::api_error::page_not_found());
        }
        checked => checked?,
    }
    let storage = scheme.storage_entry(entry).ok_or_else(|| {
        ApiError::internal(format!(
            "{} {} is served through a hub version that is not installed",
            entry.info.group_version, entry.info.kind
        ))
    })?;
    // The create-only kinds (the reviews) have no Table form upstream.
    let table = entry.info.verbs.contains(&"get");
    let output = Output::for_kind(headers, entry.proto.is_some(), table)?;
    let ctx = Ctx {
        app,
        req,
        entry,
        storage,
        query,
        headers,
        output,
        user_agent_manager: crate::field_manager::entries::manager_from_user_agent(
            headers
                .get(axum::http::header::USER_AGENT)
                .map_or(&[][..], |v| v.as_bytes()),
        ),
        user,
        recorder,
        deadline,
    };
    if req.subresource.as_deref() == Some("scale") {
        let body = match req.verb {
            Verb::Update | Verb::Patch => read_body(headers, body).await?,
            _ => bytes::Bytes::new(),
        };
        return scale::handle(&ctx, body).await;
    }
    if let Some(action) = req
        .subresource
        .as_deref()
        .and_then(|name| entry.info.subresource(name))
        .filter(|s| s.body.is_some())
    {
        return action::handle(&ctx, action, read_body(headers, body).await?).await;
    }
    match req.verb {
        Verb::Get => get::handle(&ctx).await,
        Verb::List => list::handle(&ctx).await,
        Verb::Watch => watch::handle(&ctx).await,
        Verb::Create => create::handle(&ctx, read_body(headers, body).await?).await,
        Verb::Update => update::handle(&ctx, read_body(headers, body).await?).await,
        Verb::Patch => patch::handle(&ctx, read_body(headers, body).await?).await,
        Verb::Delete => delete::handle(&ctx, read_body(headers, body).await?).await,
        Verb::DeleteCollection => {
            delete::handle_collection(&ctx, read_body(headers, body).await?).await
        }
    }
}

/// Scope, subresource and verb must fit the kind: namespaced kinds need a
/// namespace for anything but listing/watching across namespaces; only the
/// kind's subresources exist; a verb the kind (or subresource) does not serve
/// is 405 where the path exists for another verb, and 404 for an object path
/// of a kind with no object verbs (a create-only review kind), as
/// kube-apiserver's routes answer.
fn check_shape(entry: &KindEntry, req: &ResourceRequest) -> ApiResult<()> {
    let info = entry.info;
    if entry.is_custom() && req.subresource.is_none() {
        // A custom resource whose definition is being deleted lists fewer
        // verbs, but only refuses creates.
        if req.verb == Verb::Create && !info.serves("create") {
            let details = kapi_runtime::meta::StatusDetails {
                group: Some(info.group.to_owned()),
                kind: Some(info.plural.to_owned()),
                ..Default::default()
            };
            return Err(ApiError::method_not_allowed_because(
                "create not allowed while custom resource definition is terminating",
                details,
            ));
        }
    } else if req.subresource.is_none() && !info.serves(req.verb.as_str()) {
        let object_verbs = ["get", "update", "patch", "delete"];
        if req.name.is_some() && !object_verbs.iter().any(|v| info.serves(v)) {
            return Err(ApiError::no_route());
        }
        return Err(ApiError::method_not_allowed());
    }
    match (&req.subresource, info.status_subresource) {
        (None, _) => {}
        (Some(sub), _)
            if sub == "scale"
                && info.scale.is_some()
                && matches!(req.verb, Verb::Get | Verb::Update | Verb::Patch) => {}
        (Some(sub), _) if sub == "scale" && info.scale.is_some() => {
            return Err(ApiError::method_not_allowed());
        }
        (Some(sub), true)
            if sub == "status" && matches!(req.verb, Verb::Get | Verb::Update | Verb::Patch) => {}
        (Some(sub), true) if sub == "status" => return Err(ApiError::method_not_allowed()),
        (Some(sub), _) => match info.subresource(sub) {
            Some(s) if s.serves(req.verb.as_str()) => {}
            Some(_) => return Err(ApiError::method_not_allowed()),
            None => return Err(ApiError::no_route()),
        },
    }
    let across_namespaces = matches!(req.verb, Verb::List | Verb::Watch);
    match (info.namespaced, req.namespace.is_some()) {
        (true, false) if !across_namespaces => Err(ApiError::no_route()),
        (false, true) => Err(ApiError::no_route()),
        _ => Ok(()),
    }
}

/// Decodes the object of a create or update body: protobuf for kinds with a
/// message, JSON or YAML for every kind.
fn decode_object(ctx: &Ctx<'_>, body: &[u8]) -> ApiResult<Input> {
    decode_object_as(ctx, ctx.entry, body)
}

/// Decodes a body of `entry`'s kind (a subresource's body may be another kind
/// than the path's: a Binding posted to `pods/<name>/binding`).
fn decode_object_as(ctx: &Ctx<'_>, entry: &KindEntry, body: &[u8]) -> ApiResult<Input> {
    match negotiation::body_format(ctx.headers)? {
        Format::Protobuf => crate::protobuf::decode_object(entry, body),
        Format::Json => Input::from_json(entry, body),
        Format::Yaml => Input::from_yaml(entry, body),
    }
}

/// A body of a kind that is no resource (a Scale, an Eviction), in JSON, YAML
/// or protobuf, as the JSON its type reads and writes (unknown fields
/// dropped). A body naming another kind is refused, as kube-apiserver's
/// decoder refuses what it cannot convert.
fn decode_body(
    ctx: &Ctx<'_>,
    entry: &kapi_runtime::scheme::BodyEntry,
    body: &[u8],
) -> ApiResult<serde_json::Value> {
    let value = match negotiation::body_format(ctx.headers)? {
        Format::Protobuf => {
            let unknown = kapi_runtime::proto::envelope::decode(body)
                .map_err(|e| ApiError::bad_request(format!("invalid protobuf body: {e}")))?;
            return (entry.decode_proto)(unknown.raw)
                .map_err(|e| ApiError::bad_request(format!("invalid {}: {e}", entry.kind)));
        }
        Format::Json => negotiation::decode_json(body)?,
        Format::Yaml => crate::body::decode_yaml(body)?,
    };
    let kind = value["kind"].as_str().unwrap_or(entry.kind);
    if kind != entry.kind {
        let version = value["apiVersion"].as_str().unwrap_or_default();
        return Err(ApiError::bad_request(format!(
            "{kind} in version {version:?} cannot be handled as a {}: no conversion from {version}, Kind={kind}",
            entry.kind
        )));
    }
    (entry.normalize)(value).map_err(|e| {
        ApiError::bad_request(format!(
            "{} in version {:?} cannot be handled as a {}: {e}",
            entry.kind,
            entry.api_version(),
            entry.kind
        ))
    })
}
