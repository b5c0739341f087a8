//! CREATE (POST to a collection): 201 with the stored object.

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;

use super::{Ctx, respond};
use kapi_runtime::meta::Status;

use crate::api_error::{ApiError, ApiResult};
use crate::registry::{Scope, is_binding};

/// Handles POST `.../<resource>`.
pub async fn handle(ctx: &Ctx<'_>, body: Bytes) -> ApiResult<Response> {
    if ctx.req.subresource.as_deref() == Some("binding") {
        return bind(ctx, body, Some(ctx.name())).await;
    }
    if is_binding(ctx.scope()) {
        return bind(ctx, body, None).await;
    }
    let value = super::decode_object(ctx, &body)?;
    let written = ctx
        .app
        .registry
        .create(ctx.scope(), value, ctx.write_options()?)
        .await?;
    respond::object(ctx, StatusCode::CREATED, &written.object, &written.warnings)
}

/// POST of a Binding (to `bindings` or to `pods/<name>/binding`): the pod is
/// bound and the answer is a `Success` Status with code 201, as upstream.
async fn bind(ctx: &Ctx<'_>, body: Bytes, pod: Option<&str>) -> ApiResult<Response> {
    let bindings = ctx
        .app
        .registry
        .scheme()
        .get("", "v1", "bindings")
        .ok_or_else(ApiError::no_route)?;
    let input = super::decode_object_as(ctx, bindings, &body)?;
    let scope = Scope::new(bindings, ctx.req.namespace.as_deref());
    ctx.app.registry.bind(scope, input, pod).await?;
    let mut status = Status::success(None);
    status.code = Some(201);
    respond::status(ctx, StatusCode::CREATED, &status)
}
