//! POST to an action subresource, whose body is another kind than the
//! resource's: `pods/<name>/binding` (a Binding), `pods/<name>/eviction` (a
//! policy/v1 Eviction), `serviceaccounts/<name>/token` (a TokenRequest).

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use kapi_runtime::Subresource;
use kapi_runtime::meta::Status;
use kapi_runtime::scheme::BodyEntry;

use super::{Ctx, respond};
use crate::api_error::{ApiError, ApiResult};
use crate::registry::Scope;

/// Handles POST `.../<resource>/<name>/<action>`.
pub async fn handle(ctx: &Ctx<'_>, action: &Subresource, body: Bytes) -> ApiResult<Response> {
    let info = ctx.entry.info;
    match (info.group, info.plural, action.name) {
        ("", "pods", "binding") => bind(ctx, body, Some(ctx.name())).await,
        ("", "pods", "eviction") => {
            let eviction = super::decode_body(ctx, body_entry(ctx, action)?, &body)?;
            let dry_run = ctx.write_options()?.dry_run;
            ctx.app
                .registry
                .evict(ctx.scope(), ctx.name(), &eviction, dry_run)
                .await?;
            created(ctx)
        }
        ("", "serviceaccounts", "token") => {
            let entry = body_entry(ctx, action)?;
            let request = super::decode_body(ctx, entry, &body)?;
            let answer = ctx
                .app
                .registry
                .issue_token(ctx.scope(), ctx.name(), request)
                .await?;
            respond::body_of(ctx, entry, StatusCode::CREATED, answer, &[])
        }
        // Declared by a kind, but an action this server does not implement.
        _ => Err(ApiError::no_route()),
    }
}

/// POST of a Binding (to `bindings` or to `pods/<name>/binding`): the pod is
/// bound and the answer is a `Success` Status with code 201, as upstream.
pub async fn bind(ctx: &Ctx<'_>, body: Bytes, pod: Option<&str>) -> ApiResult<Response> {
    let bindings = ctx
        .app
        .registry
        .scheme()
        .get("", "v1", "bindings")
        .ok_or_else(ApiError::no_route)?;
    let input = super::decode_object_as(ctx, bindings, &body)?;
    let scope = Scope::new(bindings, ctx.req.namespace.as_deref());
    let dry_run = ctx.write_options()?.dry_run;
    ctx.app.registry.bind(scope, input, pod, dry_run).await?;
    created(ctx)
}

/// The answer of an action that creates nothing to show: a `Success` Status
/// with code 201, as upstream's create handler completes it.
fn created(ctx: &Ctx<'_>) -> ApiResult<Response> {
    let mut status = Status::success(None);
    status.code = Some(201);
    respond::status(ctx, StatusCode::CREATED, &status)
}

/// How the server reads and writes the action's body.
fn body_entry<'c>(ctx: &'c Ctx<'_>, action: &Subresource) -> ApiResult<&'c BodyEntry> {
    let kind = action.body.ok_or_else(ApiError::no_route)?;
    ctx.app
        .registry
        .scheme()
        .body(kind.group, kind.version, kind.kind)
        .ok_or_else(|| {
            ApiError::internal(format!(
                "the body {}/{} {} of {} is not installed",
                kind.group, kind.version, kind.kind, action.name
            ))
        })
}
