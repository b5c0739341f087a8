//! POST to an action, whose body is another kind than the resource's:
//! `pods/<name>/binding` (a Binding), `pods/<name>/eviction` (a policy/v1
//! Eviction), `serviceaccounts/<name>/token` (a TokenRequest), and the
//! creates of a resource that is an action on another (`bindings`). The
//! body is decoded here; what the action does is its kind's
//! ([`crate::registry::hooks::Action`]).

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use kapi_runtime::Subresource;
use kapi_runtime::meta::Status;
use kapi_runtime::scheme::BodyEntry;

use super::{Ctx, respond};
use crate::api_error::{ApiError, ApiResult};
use crate::registry::hooks::{Action, ActionBody};

/// Handles POST `.../<resource>/<name>/<action>`.
pub async fn handle(
    ctx: &Ctx<'_>,
    subresource: &'static Subresource,
    body: Bytes,
) -> ApiResult<Response> {
    // Declared by a kind, but an action this server does not implement.
    let action = ctx
        .app
        .registry
        .hooks()
        .action(ctx.entry.info, subresource.name)
        .ok_or_else(ApiError::no_route)?;
    let kind = subresource.body.ok_or_else(ApiError::no_route)?;
    let scheme = ctx.app.registry.scheme();
    // A body of a kind served as a resource (a Binding) is that kind's
    // object; any other is the JSON its type reads and writes.
    let body_kind = (kind.group, kind.version, kind.kind);
    let opts = ctx.write_options()?;
    if let Some(entry) = scheme.get_kind(kind.group, kind.version, kind.kind) {
        let mut input = super::decode_object_as(ctx, entry, &body)?;
        let registry = &ctx.app.registry;
        let scope = ctx.scope();
        if registry
            .admits_action(scope, subresource, ctx.name(), body_kind, &opts)
            .await?
        {
            // Admission sees the body as JSON; what it changed is decoded again.
            let mut json = input.object.to_value().map_err(ApiError::internal)?;
            let before = json.clone();
            registry
                .admit_action(scope, subresource, ctx.name(), body_kind, &mut json, &opts)
                .await?;
            if json != before {
                input = crate::body::Input::from_value(entry, json)?;
            }
        }
        return act(
            ctx,
            action,
            Some(ctx.name()),
            ActionBody::Object(input),
            None,
        )
        .await;
    }
    let entry = scheme
        .body(kind.group, kind.version, kind.kind)
        .ok_or_else(|| {
            ApiError::internal(format!(
                "the body {}/{} {} of {} is not installed",
                kind.group, kind.version, kind.kind, subresource.name
            ))
        })?;
    let mut value = super::decode_body(ctx, entry, &body)?;
    ctx.app
        .registry
        .admit_action(
            ctx.scope(),
            subresource,
            ctx.name(),
            body_kind,
            &mut value,
            &opts,
        )
        .await?;
    act(
        ctx,
        action,
        Some(ctx.name()),
        ActionBody::Value(value),
        Some(entry),
    )
    .await
}

/// Handles POST `.../<resource>` of a resource whose creates are `action`.
pub async fn create(ctx: &Ctx<'_>, action: &dyn Action, body: Bytes) -> ApiResult<Response> {
    let input = super::decode_object(ctx, &body)?;
    act(ctx, action, None, ActionBody::Object(input), None).await
}

/// Runs the action; its answer is sent as `entry`'s kind, or, when it has
/// none, as a `Success` Status with code 201, as upstream's create handler
/// completes it.
async fn act(
    ctx: &Ctx<'_>,
    action: &dyn Action,
    name: Option<&str>,
    body: ActionBody,
    entry: Option<&BodyEntry>,
) -> ApiResult<Response> {
    let dry_run = ctx.write_options()?.dry_run;
    let answer = action
        .act(
            &ctx.app.registry,
            ctx.scope(),
            name,
            body,
            dry_run,
            ctx.user,
        )
        .await?;
    match (answer, entry) {
        (Some(answer), Some(entry)) => {
            respond::body_of(ctx, entry, StatusCode::CREATED, answer, &[])
        }
        (Some(_), None) => Err(ApiError::internal("an action answered with no body kind")),
        (None, _) => {
            let mut status = Status::success(None);
            status.code = Some(201);
            respond::status(ctx, StatusCode::CREATED, &status)
        }
    }
}
