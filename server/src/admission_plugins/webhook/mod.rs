//! MutatingAdmissionWebhook and ValidatingAdmissionWebhook: the writes the
//! cluster's webhook configurations select are sent to their webhooks as
//! `AdmissionReview`s, as kube-apiserver 1.32 sends them
//! (k8s.io/apiserver's `pkg/admission/plugin/webhook`).
//!
//! - The webhooks run after every built-in plugin of their phase: the
//!   mutating ones one after another, each on the object as the ones before
//!   it left it (a JSONPatch answer is applied, then the kind's defaults);
//!   the validating ones all at once, the first refusal to arrive winning.
//! - A webhook is called for a request its `rules` (operations, groups,
//!   versions, resources with subresources, scope), `namespaceSelector` and
//!   `objectSelector` select; writes of the webhook and policy configurations
//!   themselves never are.
//! - Refusals, failed calls (`failurePolicy` Fail or Ignore), dry runs of
//!   webhooks with side effects, warnings and audit annotations answer with
//!   upstream's words and codes.
//!
//! - `matchConditions` are CEL expressions on `object`, `oldObject` and
//!   `request`, evaluated by the engine of the CRD rules.
//!
//! - `matchPolicy: Equivalent` (the default) calls a webhook registered for
//!   an equivalent resource (another served version, or the same objects
//!   served by another group: core and events.k8s.io Events) in its
//!   version: the objects are converted to it, and a patch is applied
//!   there and converted back.
//!
//! Match conditions' `authorizer` asks the server's authorizers
//! (`super::authorizing`); they keep to upstream's cost budget.
//! `reinvocationPolicy: IfNeeded` and upstream's reinvoker: a webhook's
//! change runs the whole mutating chain once more (built-in plugins
//! included); in that run the `IfNeeded` webhooks called before a change
//! are called again.

mod config;
mod metrics;
pub(super) mod review;
mod services;

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use hyper::body::Bytes;
use kapi_api_types::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kapi_runtime::meta::{Status, StatusDetails};
use serde_json::{Value, json};

use config::{Hook, Source};
use metrics::Rejection;

use super::matching;
use crate::admission::{Operation, Plugin, Reinvocation, Request, Subject, View};
use crate::api_error::{ApiError, ApiResult};
use crate::body::{Input, Object};
use crate::loopback::Loopback;
use crate::scope::Scope;
use crate::webhook_client;
use kapi_runtime::scheme::KindEntry;

/// What both webhook plugins share: the configurations' compiled hooks and
/// the client with its kept connections.
#[derive(Default)]
pub struct Webhooks {
    /// What the `authorizer` variable of match conditions asks.
    authorizer: Arc<crate::authz::Authorizer>,
    client: webhook_client::Client,
    mutating: Source,
    validating: Source,
    metrics: metrics::Metrics,
}

impl Webhooks {
    /// The mutating webhooks, in order.
    async fn mutating_hooks(&self, objects: &dyn Loopback) -> ApiResult<Vec<Arc<Hook>>> {
        self.mutating
            .hooks::<MutatingWebhookConfiguration>(objects)
            .await
    }

    /// The validating webhooks, in order.
    async fn validating_hooks(&self, objects: &dyn Loopback) -> ApiResult<Vec<Arc<Hook>>> {
        self.validating
            .hooks::<ValidatingWebhookConfiguration>(objects)
            .await
    }
}

/// The two plugins, their metrics in `registry`.
pub fn plugins(
    registry: &mut prometheus_client::registry::Registry,
    authorizer: Arc<crate::authz::Authorizer>,
) -> (MutatingAdmissionWebhook, ValidatingAdmissionWebhook) {
    let shared = Arc::new(Webhooks {
        authorizer,
        ..Webhooks::default()
    });
    shared.metrics.register(registry);
    (
        MutatingAdmissionWebhook(shared.clone()),
        ValidatingAdmissionWebhook(shared),
    )
}

/// Calls the mutating webhooks.
pub struct MutatingAdmissionWebhook(Arc<Webhooks>);

/// Calls the validating webhooks.
pub struct ValidatingAdmissionWebhook(Arc<Webhooks>);

/// The configuration kinds whose writes no webhook sees (upstream's
/// `IsExemptAdmissionConfigurationResource`).
fn exempt(request: &Request<'_>) -> bool {
    let info = request.attrs.scope.info();
    info.group == "admissionregistration.k8s.io"
        && matches!(
            info.plural,
            "validatingwebhookconfigurations"
                | "mutatingwebhookconfigurations"
                | "validatingadmissionpolicies"
                | "validatingadmissionpolicybindings"
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        )
}

#[async_trait]
impl Plugin for MutatingAdmissionWebhook {
    fn name(&self) -> &'static str {
        "MutatingAdmissionWebhook"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        !exempt(request)
    }

    async fn selects_request(
        &self,
        request: &Request<'_>,
        objects: &dyn Loopback,
    ) -> ApiResult<bool> {
        if exempt(request) {
            return Ok(false);
        }
        let hooks = self.0.mutating_hooks(objects).await?;
        Ok(any_invoked(&hooks, request, objects))
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let hooks = self.0.mutating_hooks(objects).await?;
        // No JSON form of either object unless a webhook's rules select the
        // request.
        if !any_invoked(&hooks, request, objects) {
            return Ok(());
        }
        let scope = request.attrs.scope;
        let as_stored = scope.is_served_as_stored();
        // The object in the request's version, as JSON, carried from one
        // webhook to the next.
        let mut versioned: Option<Value> = None;
        let old_json = match old {
            Some(old) => Some(versioned_view(request, old)?),
            None => None,
        };
        let mut changed_any = false;
        // Reinvocation (upstream's reinvocation context): a change by a
        // webhook has the whole mutating chain run again; in that run only
        // the `IfNeeded` webhooks called before a change are called again
        // (and all of them when the built-in plugins changed the object
        // since the webhooks last saw it).
        let reinvocation = &request.reinvocation;
        let reinvoking = reinvocation.is_reinvoke();
        let round = usize::from(reinvoking);
        if reinvoking {
            let last = record(reinvocation).last_output.clone();
            let now = if as_stored {
                object.object()?.to_value().map_err(ApiError::internal)?
            } else {
                versioned_object(request, object.object()?)?
            };
            let mut state = record(reinvocation);
            if last.is_some_and(|last| last != now) {
                state.require_previously_invoked();
            }
            if state.reinvoke.is_empty() {
                return Ok(());
            }
            drop(state);
            versioned = Some(now);
        }
        for (index, hook) in hooks.iter().enumerate() {
            let key = format!("{index}/{}", hook.name);
            if reinvoking && !record(reinvocation).reinvoke.contains(&key) {
                continue;
            }
            if matching::invocation(&hook.rules, request, hook.equivalent, objects).is_none() {
                continue;
            }
            if versioned.is_none() {
                versioned = Some(if as_stored {
                    object.object()?.to_value().map_err(ApiError::internal)?
                } else {
                    versioned_object(request, object.object()?)?
                });
            }
            let Some(current) = versioned.as_mut() else {
                continue;
            };
            let name = object_name(request, current);
            let selected = selects(
                hook,
                request,
                &name,
                Some(current),
                old_json.as_ref(),
                objects,
            )
            .await?;
            let Some(invoked_in) = selected else {
                continue;
            };
            // A webhook registered for another version of the resource
            // gets the objects in that version; its patch is applied
            // there and the result converted back.
            // A write through /scale is shown as its Scale.
            let mut converted = match &invoked_in {
                _ if request.via_scale => Some((
                    scale_form(request, current, objects)?,
                    match &old_json {
                        Some(old) => Some(scale_form(request, old, objects)?),
                        None => None,
                    },
                )),
                Some(entry) => Some((
                    to_version(request, current, entry)?,
                    match &old_json {
                        Some(old) => Some(to_version(request, old, entry)?),
                        None => None,
                    },
                )),
                None => None,
            };
            let call = Call {
                hook,
                index,
                round,
                mutating: true,
                request,
                name: &name,
                invoked: invoked_in.as_ref(),
            };
            let (target, old_for) = match &mut converted {
                Some((object, old)) => (object, old.as_ref()),
                None => (&mut *current, old_json.as_ref()),
            };
            let answer = call.send(&self.0, Some(&*target), old_for, objects).await?;
            let Some(answer) = answer else { continue };
            let mutated = match &answer.patch {
                Some(patch) => call.apply(&self.0, target, patch, answer.patch_type.as_deref())?,
                None => false,
            };
            if mutated {
                match (converted, &invoked_in) {
                    (Some((scale, _)), _) if request.via_scale => {
                        set_replicas(request, current, &scale);
                    }
                    (Some((object, _)), Some(entry)) => {
                        *current = from_version(request, object, entry)?;
                    }
                    _ => {}
                }
            }
            call.note_mutation(mutated, answer.patch.as_deref());
            changed_any |= mutated;
            let mut state = record(reinvocation);
            if mutated {
                state.require_previously_invoked();
                reinvocation.require();
            }
            if hook.reinvoke {
                state.previously_invoked.push(key);
            }
        }
        if changed_any && let Some(json) = versioned {
            let mut decoded = Input::from_value(scope.served, json)?.object;
            decoded.typed_mut().apply_defaults();
            *object.object()? = scope.to_storage(decoded)?;
        }
        // What the webhooks leave (defaulted), for the second run to tell
        // whether the built-in plugins changed it; needed only while some
        // webhook may be called again.
        if !record(reinvocation).previously_invoked.is_empty() {
            let left = if as_stored {
                object.object()?.to_value().map_err(ApiError::internal)?
            } else {
                versioned_object(request, object.object()?)?
            };
            record(reinvocation).last_output = Some(left);
        }
        Ok(())
    }

    fn handles_actions(&self) -> bool {
        true
    }

    async fn admit_action(
        &self,
        request: &Request<'_>,
        body: &mut Value,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let hooks = self.0.mutating_hooks(objects).await?;
        for (index, hook) in hooks.iter().enumerate() {
            let name = request.attrs.name.clone();
            if selects(hook, request, &name, Some(body), None, objects)
                .await?
                .is_none()
            {
                continue;
            }
            let call = Call {
                hook,
                index,
                round: 0,
                mutating: true,
                request,
                name: &name,
                invoked: None,
            };
            let answer = call.send(&self.0, Some(&*body), None, objects).await?;
            let Some(answer) = answer else { continue };
            let mutated = match &answer.patch {
                Some(patch) => call.apply(&self.0, body, patch, answer.patch_type.as_deref())?,
                None => false,
            };
            call.note_mutation(mutated, answer.patch.as_deref());
        }
        Ok(())
    }

    async fn admit_delete(
        &self,
        request: &Request<'_>,
        old: &View<'_>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let hooks = self.0.mutating_hooks(objects).await?;
        if hooks.is_empty() {
            return Ok(());
        }
        let old_json = versioned_view(request, old)?;
        for (index, hook) in hooks.iter().enumerate() {
            let name = request.attrs.name.clone();
            let Some(invoked_in) =
                selects(hook, request, &name, None, Some(&old_json), objects).await?
            else {
                continue;
            };
            let old_in = match &invoked_in {
                Some(entry) => to_version(request, &old_json, entry)?,
                None => old_json.clone(),
            };
            let call = Call {
                hook,
                index,
                round: 0,
                mutating: true,
                request,
                name: &name,
                invoked: invoked_in.as_ref(),
            };
            let answer = call.send(&self.0, None, Some(&old_in), objects).await?;
            if let Some(answer) = answer {
                if answer.patch.is_some() {
                    return Err(ApiError::internal(format!(
                        "admission webhook {:?} attempted to modify the object, which is not supported for this operation",
                        hook.name
                    )));
                }
                call.note_mutation(false, None);
            }
        }
        Ok(())
    }
}

#[async_trait]
impl Plugin for ValidatingAdmissionWebhook {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionWebhook"
    }

    fn validates(&self, request: &Request<'_>) -> bool {
        !exempt(request)
    }

    async fn selects_request(
        &self,
        request: &Request<'_>,
        objects: &dyn Loopback,
    ) -> ApiResult<bool> {
        if exempt(request) {
            return Ok(false);
        }
        let hooks = self.0.validating_hooks(objects).await?;
        Ok(any_invoked(&hooks, request, objects))
    }

    fn handles_actions(&self) -> bool {
        true
    }

    async fn admit_action(
        &self,
        request: &Request<'_>,
        body: &mut Value,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        self.action(request, body, objects).await
    }

    async fn validate(
        &self,
        request: &Request<'_>,
        object: &View<'_>,
        old: Option<&View<'_>>,
        objects: &dyn Loopback,
        _warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let hooks = self.0.validating_hooks(objects).await?;
        if !any_invoked(&hooks, request, objects) {
            return Ok(());
        }
        let mut json = versioned_view(request, object)?;
        let mut old_json = match old {
            Some(old) => Some(versioned_view(request, old)?),
            None => None,
        };
        let name = object_name(request, &json);
        if request.via_scale {
            json = scale_form(request, &json, objects)?;
            old_json = match old_json {
                Some(old) => Some(scale_form(request, &old, objects)?),
                None => None,
            };
        }
        self.call_all(
            request,
            &hooks,
            &name,
            Some(&json),
            old_json.as_ref(),
            objects,
        )
        .await
    }

    async fn admit_delete(
        &self,
        request: &Request<'_>,
        old: &View<'_>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let hooks = self.0.validating_hooks(objects).await?;
        if hooks.is_empty() {
            return Ok(());
        }
        let old_json = versioned_view(request, old)?;
        let name = request.attrs.name.clone();
        self.call_all(request, &hooks, &name, None, Some(&old_json), objects)
            .await
    }
}

impl ValidatingAdmissionWebhook {
    /// The validating webhooks of an action's body.
    async fn action(
        &self,
        request: &Request<'_>,
        body: &Value,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let hooks = self.0.validating_hooks(objects).await?;
        if hooks.is_empty() {
            return Ok(());
        }
        let name = request.attrs.name.clone();
        self.call_all(request, &hooks, &name, Some(body), None, objects)
            .await
    }

    /// Calls every selected webhook at once; the first refusal or failure
    /// to arrive is the answer.
    async fn call_all(
        &self,
        request: &Request<'_>,
        hooks: &[Arc<Hook>],
        name: &str,
        object: Option<&Value>,
        old: Option<&Value>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let mut selected = Vec::new();
        for hook in hooks {
            if let Some(invoked_in) = selects(hook, request, name, object, old, objects).await? {
                // A webhook registered for another version of the resource
                // gets the objects in that version.
                let objects_in = match &invoked_in {
                    Some(entry) => Some((
                        object.map(|o| to_version(request, o, entry)).transpose()?,
                        old.map(|o| to_version(request, o, entry)).transpose()?,
                    )),
                    None => None,
                };
                selected.push((hook, invoked_in, objects_in));
            }
        }
        let mut calls: FuturesUnordered<_> = selected
            .iter()
            .enumerate()
            .map(|(index, (hook, invoked_in, objects_in))| async move {
                let call = Call {
                    hook,
                    index,
                    round: 0,
                    mutating: false,
                    request,
                    name,
                    invoked: invoked_in.as_ref(),
                };
                let (object, old) = match objects_in {
                    Some((object, old)) => (object.as_ref(), old.as_ref()),
                    None => (object, old),
                };
                call.send(&self.0, object, old, objects).await.map(|_| ())
            })
            .collect();
        let mut first = None;
        while let Some(outcome) = calls.next().await {
            if let Err(e) = outcome
                && first.is_none()
            {
                first = Some(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// Whether the rules of any of `hooks` select the request.
fn any_invoked(hooks: &[Arc<Hook>], request: &Request<'_>, objects: &dyn Loopback) -> bool {
    hooks
        .iter()
        .any(|h| matching::invocation(&h.rules, request, h.equivalent, objects).is_some())
}

/// The name a webhook is told: the object's (empty while `generateName`
/// is still to be used), else the request's.
fn object_name(request: &Request<'_>, object: &Value) -> String {
    match object.pointer("/metadata/name").and_then(Value::as_str) {
        Some(name) => name.to_owned(),
        None if request.operation == Operation::Create => String::new(),
        None => request.attrs.name.clone(),
    }
}

/// The object in the request's version, as JSON.
fn versioned_object(request: &Request<'_>, object: &Object) -> ApiResult<Value> {
    let scope = request.attrs.scope;
    let served = scope.to_served(Object::new(object.typed().clone_object()))?;
    served.to_value().map_err(ApiError::internal)
}

/// A viewed object in the request's version, as JSON.
pub(super) fn versioned_view(request: &Request<'_>, view: &View<'_>) -> ApiResult<Value> {
    if request.attrs.scope.is_served_as_stored() {
        view.json().cloned()
    } else {
        versioned_object(request, view.object())
    }
}

/// The webhooks' reinvocation record of a request.
fn record(
    reinvocation: &Reinvocation,
) -> std::sync::MutexGuard<'_, crate::admission::WebhookReinvocation> {
    reinvocation
        .webhooks
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether `hook` is to be called for `request` (upstream's
/// `ShouldCallHook`): its rules, then its namespace and object selectors.
async fn selects(
    hook: &Hook,
    request: &Request<'_>,
    name: &str,
    object: Option<&Value>,
    old: Option<&Value>,
    objects: &dyn Loopback,
) -> ApiResult<Option<Option<KindEntry>>> {
    let Some(invoked_in) = matching::invocation(&hook.rules, request, hook.equivalent, objects)
    else {
        return Ok(None);
    };
    let namespaces = hook
        .namespace_selector
        .as_ref()
        .map_err(|e| ApiError::internal(e.clone()))?;
    if !matching::namespace_matches(namespaces, request, name, object, old, objects).await? {
        return Ok(None);
    }
    let selector = hook
        .object_selector
        .as_ref()
        .map_err(|e| ApiError::internal(e.clone()))?;
    Ok(matching::object_matches(selector, object, old).then_some(invoked_in))
}

/// The Scale of `json` (a write through `/scale`), as upstream admits it.
fn scale_form(request: &Request<'_>, json: &Value, objects: &dyn Loopback) -> ApiResult<Value> {
    objects
        .scale_of(request.attrs.scope.served.info, json)?
        .ok_or_else(|| ApiError::internal("a write through /scale of a kind without it"))
}

/// The object of a write through `/scale` with the replicas a webhook set
/// in its Scale.
fn set_replicas(request: &Request<'_>, object: &mut Value, scale: &Value) {
    let Some(facts) = request.attrs.scope.served.info.scale else {
        return;
    };
    let pointer: String = facts
        .spec_replicas
        .split('.')
        .filter(|p| !p.is_empty())
        .map(|p| format!("/{p}"))
        .collect();
    if let Some(slot) = object.pointer_mut(&pointer) {
        *slot = scale["spec"]["replicas"].clone();
    }
}

/// `json`, an object in the request's version, in `entry`'s version.
pub(super) fn to_version(
    request: &Request<'_>,
    json: &Value,
    entry: &KindEntry,
) -> ApiResult<Value> {
    let scope = request.attrs.scope;
    let typed = Input::from_value(scope.served, json.clone())?.object;
    let stored = scope.to_storage(typed)?;
    let there = Scope {
        served: entry,
        ..scope
    };
    there
        .to_served(stored)?
        .to_value()
        .map_err(ApiError::internal)
}

/// `json`, an object in `entry`'s version, back in the request's version.
fn from_version(request: &Request<'_>, json: Value, entry: &KindEntry) -> ApiResult<Value> {
    let scope = request.attrs.scope;
    let there = Scope {
        served: entry,
        ..scope
    };
    let typed = Input::from_value(entry, json)?.object;
    let stored = there.to_storage(typed)?;
    scope
        .to_served(stored)?
        .to_value()
        .map_err(ApiError::internal)
}

/// One webhook called for one request.
struct Call<'a> {
    hook: &'a Hook,
    /// Its index: among all webhooks (mutating), among the selected ones
    /// (validating), as upstream's annotations number them.
    index: usize,
    /// 0, or 1 when a mutating webhook is called again.
    round: usize,
    mutating: bool,
    request: &'a Request<'a>,
    name: &'a str,
    /// The version the webhook is called in, when not the request's.
    invoked: Option<&'a KindEntry>,
}

impl Call<'_> {
    /// Sends the review; the answer when the webhook allowed the request,
    /// None when its failure was ignored, `Err` for a refusal or a failure
    /// under `failurePolicy: Fail`.
    async fn send(
        &self,
        webhooks: &Webhooks,
        object: Option<&Value>,
        old: Option<&Value>,
        objects: &dyn Loopback,
    ) -> ApiResult<Option<review::Response>> {
        let hook = self.hook;
        if self.request.dry_run {
            match hook.side_effects.as_deref() {
                None => {
                    return self.failed(webhooks, "Webhook SideEffects is nil".to_owned(), 400);
                }
                Some("None" | "NoneOnDryRun") => {}
                Some(_) => {
                    let (kind, operation) = self.labels();
                    let metrics = &webhooks.metrics;
                    metrics.reject(&hook.name, kind, operation, Rejection::Internal, 0);
                    metrics.observe(&hook.name, kind, operation, Duration::ZERO, true, 0);
                    return Err(ApiError::bad_request(format!(
                        "admission webhook {:?} does not support dry run",
                        hook.name
                    )));
                }
            }
        }
        let uid = uuid::Uuid::new_v4().to_string();
        let version = hook.review_version.unwrap_or("v1");
        let invoked = self
            .invoked
            .map_or(self.request.attrs.scope.served.info, |e| e.info);
        let body = review::request(version, &uid, self.request, invoked, self.name, object, old);
        if !hook.conditions.is_empty()
            && !self
                .conditions_hold(&webhooks.authorizer, objects, &body, object, old)
                .await?
        {
            return Ok(None);
        }
        let started = Instant::now();
        let Some(version) = hook.review_version else {
            return self.failed(
                webhooks,
                "could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)"
                    .to_owned(),
                400,
            );
        };
        let target = match &hook.target {
            Ok(target) => target,
            Err(e) => return self.failed(webhooks, format!("could not get REST client: {e}"), 400),
        };
        let body = match serde_json::to_vec(&body) {
            Ok(body) => Bytes::from(body),
            Err(e) => return Err(ApiError::internal(e)),
        };
        // The call ends with the webhook's timeout or the request's
        // deadline, whichever comes first; the webhook is told the time
        // left, in whole seconds rounded up.
        let mut timeout = hook.timeout;
        if let Some(deadline) = self.request.deadline {
            timeout = timeout.min(deadline.saturating_duration_since(Instant::now()));
        }
        let seconds = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
        let query = format!("timeout={seconds}s");
        let resolver = services::Services(objects);
        let answer = webhooks
            .client
            .post(
                target,
                Some(&resolver),
                &query,
                body,
                timeout.max(Duration::from_millis(1)),
            )
            .await;
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) => {
                let code = e.status.unwrap_or(400);
                return self.failed_after(
                    webhooks,
                    format!("failed to call webhook: {e}"),
                    code,
                    started,
                );
            }
        };
        let response = match review::response(&answer, version, &uid, self.mutating) {
            Ok(response) => response,
            Err(e) => {
                // An answer that does not decode is the REST client's error
                // (400); one that decodes but is not right is a 503.
                let code = if e.starts_with("failed to call webhook") {
                    400
                } else {
                    503
                };
                return self.failed_after(webhooks, e, code, started);
            }
        };
        if let Some(recorder) = self.request.recorder {
            for (key, value) in &response.audit_annotations {
                recorder.annotate(format!("{}/{key}", hook.name), value.clone());
            }
            for warning in &response.warnings {
                recorder.warn(warning);
            }
        }
        let (kind, operation) = self.labels();
        let metrics = &webhooks.metrics;
        if !response.allowed {
            let refusal = denied(&hook.name, &response.status);
            let code = refusal.code();
            metrics.reject(&hook.name, kind, operation, Rejection::NoError, code);
            metrics.observe(&hook.name, kind, operation, started.elapsed(), true, code);
            return Err(refusal);
        }
        metrics.observe(&hook.name, kind, operation, started.elapsed(), false, 200);
        Ok(Some(response))
    }

    /// The metrics' `type` and `operation` labels of this call.
    fn labels(&self) -> (&'static str, &'static str) {
        let kind = if self.mutating { "admit" } else { "validating" };
        (kind, review::operation(self.request.operation))
    }

    /// Whether the webhook's `matchConditions` all hold (upstream's match
    /// conditions matcher): one that is false skips the webhook whatever the
    /// others do; errors then fail the request under `failurePolicy: Fail`
    /// (a 403) and skip the webhook under Ignore.
    async fn conditions_hold(
        &self,
        authorizer: &Arc<crate::authz::Authorizer>,
        objects: &dyn Loopback,
        review: &Value,
        object: Option<&Value>,
        old: Option<&Value>,
    ) -> ApiResult<bool> {
        let mut request = review["request"].clone();
        if let Value::Object(fields) = &mut request {
            for key in ["uid", "object", "oldObject"] {
                fields.remove(key);
            }
        }
        let null = Value::Null;
        let variables = [
            ("object", object.unwrap_or(&null)),
            ("oldObject", old.unwrap_or(&null)),
            ("request", &request),
            ("namespaceObject", &null),
        ];
        let authorizer_value = super::authorizing::authorizer_value(&request);
        // Each condition's value (None for one that did not compile), and
        // whether the conditions together spent their budget (cel-go's
        // count, as upstream's matcher keeps it).
        let evaluate = || -> (Vec<Option<Result<cel::Value, String>>>, bool) {
            crate::custom::cel::with_eval_stack(|| {
                crate::custom::cel::with_activation(&variables, |activation| {
                    activation.set_value("authorizer", authorizer_value.clone());
                    let mut left = crate::custom::cel::MATCH_CONDITIONS_BUDGET;
                    let mut values = Vec::with_capacity(self.hook.conditions.len());
                    for condition in &self.hook.conditions {
                        let Ok(program) = &condition.program else {
                            values.push(None);
                            continue;
                        };
                        let (value, cost) = activation.evaluate_counted(program);
                        if cost > left {
                            return (values, true);
                        }
                        left -= cost;
                        values.push(Some(value));
                    }
                    (values, false)
                })
            })
        };
        let user = self.request.user;
        let (values, spent) =
            super::authorizing::evaluate(authorizer, objects, user, evaluate).await;
        if spent {
            return if self.hook.fail {
                Err(self
                    .request
                    .attrs
                    .forbidden(crate::custom::cel::OUT_OF_BUDGET))
            } else {
                Ok(false)
            };
        }
        let mut errors = Vec::new();
        for (condition, value) in self.hook.conditions.iter().zip(values) {
            let Some(value) = value else {
                if let Err(e) = &condition.program {
                    errors.push(format!("compilation error: compilation failed: {e}"));
                }
                continue;
            };
            match value {
                Ok(cel::Value::Bool(true)) => {}
                Ok(cel::Value::Bool(false)) => return Ok(false),
                Ok(_) => errors.push(format!(
                    "expression '{}' resulted in error: the expression did not evaluate to a bool",
                    condition.expression
                )),
                Err(e) => errors.push(format!(
                    "expression '{}' resulted in error: {e}",
                    condition.expression
                )),
            }
        }
        match errors.len() {
            0 => Ok(true),
            _ if !self.hook.fail => Ok(false),
            1 => Err(self.request.attrs.forbidden(&errors[0])),
            _ => Err(self
                .request
                .attrs
                .forbidden(&format!("[{}]", errors.join(", ")))),
        }
    }

    /// A failed call before it was made: see [`Call::failed_after`].
    fn failed(
        &self,
        webhooks: &Webhooks,
        reason: String,
        code: u16,
    ) -> ApiResult<Option<review::Response>> {
        self.failed_after(webhooks, reason, code, Instant::now())
    }

    /// A failed call (`code` is upstream's status for it, for the metrics):
    /// ignored under `failurePolicy: Ignore` (with its audit annotation),
    /// else upstream's 500.
    fn failed_after(
        &self,
        webhooks: &Webhooks,
        reason: String,
        code: u16,
        started: Instant,
    ) -> ApiResult<Option<review::Response>> {
        let hook = self.hook;
        let (kind, operation) = self.labels();
        let metrics = &webhooks.metrics;
        metrics.observe(
            &hook.name,
            kind,
            operation,
            started.elapsed(),
            hook.fail,
            code,
        );
        if hook.fail {
            metrics.reject(&hook.name, kind, operation, Rejection::CallingWebhook, code);
            return Err(ApiError::internal(format!(
                "failed calling webhook {:?}: {reason}",
                hook.name
            )));
        }
        metrics.fail_open(&hook.name, kind);
        tracing::warn!(webhook = %hook.name, %reason, "failed calling webhook, failing open");
        if let Some(recorder) = self.request.recorder {
            let kind = if self.mutating {
                "mutation"
            } else {
                "validating"
            };
            recorder.annotate(
                format!(
                    "failed-open.{kind}.webhook.admission.k8s.io/round_{}_index_{}",
                    self.round, self.index
                ),
                hook.name.clone(),
            );
        }
        Ok(None)
    }

    /// Applies a webhook's patch to `object`; whether it changed it.
    fn apply(
        &self,
        webhooks: &Webhooks,
        object: &mut Value,
        patch: &[u8],
        patch_type: Option<&str>,
    ) -> ApiResult<bool> {
        let ops: json_patch::Patch = serde_json::from_slice(patch).map_err(ApiError::internal)?;
        if ops.0.is_empty() {
            return Ok(false);
        }
        if patch_type != Some("JSONPatch") {
            let reason = format!(
                "unsupported patch type {:?}",
                patch_type.unwrap_or_default()
            );
            return self.failed(webhooks, reason, 400).map(|_| false);
        }
        let before = object.clone();
        json_patch::patch(object, &ops).map_err(ApiError::internal)?;
        Ok(*object != before)
    }

    /// The audit annotations of a mutating webhook's call.
    fn note_mutation(&self, mutated: bool, patch: Option<&[u8]>) {
        let Some(recorder) = self.request.recorder else {
            return;
        };
        let hook = self.hook;
        recorder.annotate(
            format!(
                "mutation.webhook.admission.k8s.io/round_{}_index_{}",
                self.round, self.index
            ),
            json!({"configuration": hook.configuration, "webhook": hook.name, "mutated": mutated})
                .to_string(),
        );
        if let Some(patch) = patch
            && let Ok(ops) = serde_json::from_slice::<Value>(patch)
            && ops.as_array().is_some_and(|o| !o.is_empty())
        {
            // The patch is in events of level Request and more only.
            recorder.annotate_at(
                format!(
                    "patch.webhook.admission.k8s.io/round_{}_index_{}",
                    self.round, self.index
                ),
                json!({"configuration": hook.configuration, "webhook": hook.name,
                    "patch": ops, "patchType": "JSONPatch"})
                .to_string(),
                crate::recorder::Level::Request,
            );
        }
    }
}

/// A webhook's refusal as upstream answers it (`ToStatusErr`): the
/// webhook's Status, with a code of at least 400 and the message prefixed.
fn denied(name: &str, status: &Value) -> ApiError {
    let text = |key: &str| status.get(key).and_then(Value::as_str).unwrap_or_default();
    let code = status
        .get("code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
        .filter(|c| *c >= 400)
        .unwrap_or(400);
    let message = match (text("message"), text("reason")) {
        (m, _) if !m.is_empty() => format!("admission webhook {name:?} denied the request: {m}"),
        (_, r) if !r.is_empty() => format!("admission webhook {name:?} denied the request: {r}"),
        _ => format!("admission webhook {name:?} denied the request without explanation"),
    };
    let mut answer = Status::failure(code, text("reason"), message);
    answer.details = status
        .get("details")
        .and_then(|d| serde_json::from_value::<StatusDetails>(d.clone()).ok());
    ApiError(Box::new(answer), Vec::new())
}
