//! DELETE and DELETECOLLECTION with DeleteOptions from the body or the query.

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use kapi_runtime::meta::{DeleteOptions, Status, StatusDetails};
use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::{Ctx, options_body, respond};
use crate::api_error::{ApiError, ApiResult};
use crate::cache::Cached;
use crate::registry::Deleted;

/// DeleteOptions from the body (if any), completed by query parameters.
fn options(ctx: &Ctx<'_>, body: &Bytes) -> ApiResult<DeleteOptions> {
    let mut options = options_body::delete_options(ctx.headers, body)?;
    if let Some(grace) = ctx.query.grace_period_seconds()? {
        options.grace_period_seconds = Some(grace);
    }
    if let Some(policy) = &ctx.query.propagation_policy {
        options.propagation_policy = Some(policy.clone());
    }
    if let Some(orphan) = ctx.query.orphan_dependents()? {
        options.orphan_dependents = Some(orphan);
    }
    let dry_run: Vec<String> = ctx
        .query
        .dry_run
        .iter()
        .filter(|d| !d.is_empty())
        .cloned()
        .collect();
    if !dry_run.is_empty() {
        options.dry_run = Some(dry_run);
    }
    validate(&options)?;
    Ok(options)
}

/// Checks the options as upstream's `ValidateDeleteOptions`: a 422
/// `DeleteOptions` Status. A negative grace period is no error (the kind's
/// grace hook decides; a pod's becomes 1, as upstream).
fn validate(options: &DeleteOptions) -> ApiResult<()> {
    let mut errors = FieldErrors::default();
    let policy_path = || FieldPath::root().child("propagationPolicy");
    if let Some(policy) = options.propagation_policy.as_deref() {
        if options.orphan_dependents.is_some() {
            errors.invalid(
                policy_path(),
                policy,
                "orphanDependents and deletionPropagation cannot be both set",
            );
        }
        if !matches!(policy, "Foreground" | "Background" | "Orphan") {
            let allowed = ["Foreground", "Background", "Orphan", "nil"];
            errors.not_supported(policy_path(), policy, &allowed);
        }
    }
    if let Some(dry_run) = &options.dry_run
        && dry_run.iter().any(|d| d != "All")
    {
        let path = FieldPath::root().child("dryRun");
        errors.not_supported_value(path, GoStrings(dry_run), &["All"]);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            "meta.k8s.io",
            "DeleteOptions",
            "",
            &errors,
        ))
    }
}

/// A string list as Go's `%#v` prints it (`[]string{"a", "b"}`), the value
/// upstream's dryRun message shows.
struct GoStrings<'a>(&'a [String]);

impl std::fmt::Debug for GoStrings<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let items: Vec<String> = self.0.iter().map(|s| format!("{s:?}")).collect();
        write!(f, "[]string{{{}}}", items.join(", "))
    }
}

/// Handles DELETE `.../<resource>/<name>`: the object when it stays (finalizers,
/// graceful deletion) or when the kind returns deleted objects, else a Success
/// Status naming it, as k8s.io/apiserver answers.
pub async fn handle(ctx: &Ctx<'_>, body: Bytes) -> ApiResult<Response> {
    let options = options(ctx, &body)?;
    let mut response = answer_delete(ctx, &options).await?;
    delete_warning(ctx, &options, &mut response);
    Ok(response)
}

async fn answer_delete(ctx: &Ctx<'_>, options: &DeleteOptions) -> ApiResult<Response> {
    match ctx
        .app
        .registry
        .delete(ctx.scope(), ctx.name(), options, &ctx.delete_options())
        .await?
    {
        Deleted::Pending(object) => {
            // Upstream answers 202 only when the object stays and the client asked
            // for cascading deletion the old way (orphanDependents=false).
            let code = if options.orphan_dependents == Some(false) {
                StatusCode::ACCEPTED
            } else {
                StatusCode::OK
            };
            respond::object(ctx, code, &object, &[])
        }
        Deleted::Gone(object) if ctx.entry.info.return_deleted_object => {
            respond::object(ctx, StatusCode::OK, &object, &[])
        }
        Deleted::Gone(object) => {
            let info = ctx.entry.info;
            let details = StatusDetails {
                name: object.metadata().name.clone(),
                group: (!info.group.is_empty()).then(|| info.group.to_owned()),
                kind: Some(info.plural.to_owned()),
                uid: object.metadata().uid.clone(),
                ..StatusDetails::default()
            };
            respond::status(ctx, StatusCode::OK, &Status::success(Some(details)))
        }
    }
}

/// Handles DELETE `.../<resource>`: a list of what was deleted.
pub async fn handle_collection(ctx: &Ctx<'_>, body: Bytes) -> ApiResult<Response> {
    let list_options = ctx.query.checked_list_options(ctx.query.watch()?)?;
    let options = options(ctx, &body)?;
    let (revision, deleted) = ctx
        .app
        .registry
        .delete_collection(ctx.scope(), list_options, &options, &ctx.delete_options())
        .await?;
    // As upstream: the list deleted from, at the revision it was read.
    let meta = kapi_runtime::meta::ListMeta {
        resource_version: (revision != 0).then(|| revision.to_string()),
        ..Default::default()
    };
    let deleted: Vec<_> = deleted.into_iter().map(Cached::new).collect();
    let mut response = respond::items(ctx, &meta, deleted)?;
    delete_warning(ctx, &options, &mut response);
    Ok(response)
}

/// The kind's warning about a delete with these options (a Job's pods
/// left behind).
fn delete_warning(ctx: &Ctx<'_>, options: &DeleteOptions, response: &mut Response) {
    let rest = ctx.app.registry.hooks().rest(ctx.entry.info);
    if let Some(warning) = rest.and_then(|rest| rest.delete_warning(ctx.entry.info, options)) {
        respond::warn(response, warning);
    }
}
