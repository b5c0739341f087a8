//! Evicting a pod (`pods/<name>/eviction`, a policy/v1 Eviction): a delete
//! that honours the PodDisruptionBudget covering the pod, as kube-apiserver's
//! eviction REST does for `kubectl drain` and the controllers.
//!
//! A pod that is pending, finished or already being deleted goes at once. For
//! another pod, the one budget selecting it must allow a disruption: the
//! budget's status is decremented and the pod recorded among its disrupted
//! pods (the disruption controller forgets it again), else the answer is 429.
//! A pod that is not ready goes without spending the budget when the budget
//! says so. The pod gets the `DisruptionTarget` condition before it is
//! deleted with the eviction's DeleteOptions.

use std::collections::BTreeMap;

use async_trait::async_trait;

use crate::admission;
use crate::user::UserInfo;
use kapi_runtime::meta::{DeleteOptions, Preconditions, StatusCause, Time};
use kapi_runtime::scheme::Scheme;
use serde_json::{Map, Value, json};

use crate::api_error::{ApiError, ApiResult, Target};
use crate::registry::hooks::{Action, ActionBody};
use crate::registry::{Endpoint, ListOptions, Registry, Scope, WriteOptions};
use crate::selectors::label::LabelSelector;

/// Most disrupted pods a budget may have recorded before evictions covered
/// by it are refused (the disruption controller has fallen behind).
const MAX_DISRUPTED_PODS: usize = 2000;

/// How often a delete that lost a race with another write is tried again.
const CONFLICT_ATTEMPTS: usize = 5;

const VIOLATION: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// The eviction of a pod (`pods/<name>/eviction`, a policy/v1 Eviction).
pub struct Evict;

#[async_trait]
impl Action for Evict {
    async fn act(
        &self,
        registry: &Registry,
        pods: Scope<'_>,
        name: Option<&str>,
        body: ActionBody,
        dry_run: bool,
        user: &UserInfo,
    ) -> ApiResult<Option<Value>> {
        let (Some(name), ActionBody::Value(eviction)) = (name, body) else {
            return Err(ApiError::no_route());
        };
        // NodeRestriction: a node evicts only its own pods.
        if let Some(node) = user.node_name() {
            let attrs = admission::Attributes {
                scope: pods,
                name: name.to_owned(),
                namespace: pods.namespace.map(str::to_owned),
            };
            crate::admission_plugins::node_restriction::admit_eviction(
                &attrs, node, name, registry,
            )
            .await?;
        }
        evict(registry, pods, name, &eviction, dry_run, user).await?;
        Ok(None)
    }
}

/// Evicts pod `name` in `pods`' namespace as the Eviction body (JSON)
/// asks; `dry_run` is the request's `dryRun=All`.
async fn evict(
    registry: &Registry,
    pods: Scope<'_>,
    name: &str,
    eviction: &Value,
    dry_run: bool,
    user: &UserInfo,
) -> ApiResult<()> {
    if eviction["metadata"]["name"].as_str().unwrap_or_default() != name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let options = delete_options(eviction, dry_run)?;
    let pinned = options
        .preconditions
        .as_ref()
        .is_some_and(|p| p.resource_version.is_some());
    // A pod that cannot disrupt anything more is deleted directly; a
    // conflict with another writer is retried unless the client pinned a
    // resourceVersion.
    let mut attempt = 0;
    let pod = loop {
        attempt += 1;
        let pod = registry.get(pods, name).await?;
        let pod = pod.to_value().map_err(ApiError::internal)?;
        if !can_ignore_budgets(&pod) {
            break pod;
        }
        let mut options = options.clone();
        if enforces_resource_version(&pod) && !pinned {
            pin_resource_version(&mut options, &pod);
        }
        match delete_evicted(registry, pods, name, options, user).await {
            Err(e) if e.code() == 409 && !pinned && attempt < CONFLICT_ATTEMPTS => continue,
            other => return other,
        }
    };
    let scheme = registry.scheme();
    let budgets = budgets_of(registry, &scheme, pods, &pod).await?;
    let budget = match budgets.as_slice() {
        [] => None,
        [budget] => Some(budget),
        _ => {
            return Err(ApiError::plain(
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            ));
        }
    };
    let mut guard = false;
    if let Some((budget_scope, budget)) = budget {
        let budget_name = budget["metadata"]["name"].as_str().unwrap_or_default();
        guard = !is_ready(&pod) && spares_unhealthy(budget);
        if !guard {
            let dry = options.dry_run.as_ref().is_some_and(|d| !d.is_empty());
            let decrement = |doc: &mut Value| check_and_decrement(doc, name, dry);
            if dry {
                decrement(&mut budget.clone())?;
            } else {
                registry
                    .edit(
                        *budget_scope,
                        budget_name,
                        Endpoint::Status,
                        &decrement,
                        // Upstream updates the budget through its loopback
                        // client: recorded as kube-apiserver's.
                        WriteOptions {
                            manager: "kube-apiserver",
                            ..WriteOptions::default()
                        },
                    )
                    .await?;
            }
        }
    }
    let mut delete = options;
    if guard {
        // The pod must still be unready when it is deleted.
        pin_resource_version(&mut delete, &pod);
    }
    match delete_evicted(registry, pods, name, delete, user).await {
        Err(e) if e.code() == 409 && guard && !pinned => {
            let budget_name = budget
                .and_then(|(_, b)| b["metadata"]["name"].as_str())
                .unwrap_or_default();
            Err(still_processing(budget_name))
        }
        other => other,
    }
}

/// The pod disruption budgets of the pod's namespace whose selector
/// selects the pod (a budget without a selector selects nothing), each
/// with its scope.
async fn budgets_of<'s>(
    registry: &Registry,
    scheme: &'s Scheme,
    pods: Scope<'s>,
    pod: &Value,
) -> ApiResult<Vec<(Scope<'s>, Value)>> {
    let Some(entry) = scheme.get("policy", "v1", "poddisruptionbudgets") else {
        return Ok(Vec::new());
    };
    let scope = Scope::new(entry, pods.namespace);
    let page = registry.list(scope, ListOptions::default()).await?;
    let labels: Option<BTreeMap<String, String>> =
        serde_json::from_value(pod["metadata"]["labels"].clone()).ok();
    let mut out = Vec::new();
    for item in page.items {
        let budget = item.object().and_then(|o| o.to_value());
        let budget = budget.map_err(ApiError::internal)?;
        let selects = LabelSelector::from_json(&budget["spec"]["selector"])
            .is_ok_and(|selector| selector.matches(labels.as_ref()));
        if selects {
            out.push((scope, budget));
        }
    }
    Ok(out)
}

/// Marks the pod as a disruption target (unless this is a dry run), then
/// deletes it with `options`.
async fn delete_evicted(
    registry: &Registry,
    pods: Scope<'_>,
    name: &str,
    mut options: DeleteOptions,
    user: &UserInfo,
) -> ApiResult<()> {
    let dry_run = options.dry_run.as_ref().is_some_and(|d| !d.is_empty());
    if !dry_run {
        let preconditions = options.preconditions.clone().unwrap_or_default();
        let mark = |doc: &mut Value| {
            check_preconditions(doc, name, &preconditions)?;
            add_disruption_target(doc);
            Ok(())
        };
        let written = registry
            .edit(pods, name, Endpoint::Status, &mark, WriteOptions::default())
            .await?;
        if let Some(pre) = options
            .preconditions
            .as_mut()
            .filter(|p| p.resource_version.is_some())
        {
            // This write moved the pod on: the pin follows it.
            pre.resource_version
                .clone_from(&written.object.metadata().resource_version);
        }
    }
    registry.delete(pods, name, &options, user).await?;
    Ok(())
}

/// The eviction's DeleteOptions, with the request's dry run: both may ask for
/// one, but not for different ones.
fn delete_options(eviction: &Value, dry_run: bool) -> ApiResult<DeleteOptions> {
    let mut options: DeleteOptions = match eviction.get("deleteOptions") {
        None | Some(Value::Null) => DeleteOptions::default(),
        Some(value) => serde_json::from_value(value.clone())
            .map_err(|e| ApiError::bad_request(format!("invalid deleteOptions: {e}")))?,
    };
    let requested: Vec<String> = if dry_run {
        vec!["All".to_owned()]
    } else {
        Vec::new()
    };
    let body = options.dry_run.clone().unwrap_or_default();
    if body.is_empty() {
        options.dry_run = (!requested.is_empty()).then_some(requested);
    } else if !requested.is_empty() && requested != body {
        return Err(ApiError::plain(format!(
            "Non-matching dry-run options in request and content: [{}] and [{}]",
            requested.join(" "),
            body.join(" ")
        )));
    }
    Ok(options)
}

/// Pending, finished and terminating pods disrupt nothing more: no budget is
/// consulted.
fn can_ignore_budgets(pod: &Value) -> bool {
    matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed" | "Pending")
    ) || !pod["metadata"]["deletionTimestamp"].is_null()
}

/// Whether the delete of a pod that skips the budgets must be pinned to the
/// version read (a pending pod could become ready meanwhile).
fn enforces_resource_version(pod: &Value) -> bool {
    !matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    ) && pod["metadata"]["deletionTimestamp"].is_null()
}

fn pin_resource_version(options: &mut DeleteOptions, pod: &Value) {
    let rv = pod["metadata"]["resourceVersion"]
        .as_str()
        .map(str::to_owned);
    options
        .preconditions
        .get_or_insert_with(Preconditions::default)
        .resource_version = rv;
}

/// The pod's `Ready` condition is `True`.
fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// Whether an unready pod may go without spending the budget: always under
/// `unhealthyPodEvictionPolicy: AlwaysAllow`, else (`IfHealthyBudget`) while
/// the budget has the healthy pods it wants.
fn spares_unhealthy(budget: &Value) -> bool {
    if budget["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow" {
        return true;
    }
    let status = &budget["status"];
    let desired = status["desiredHealthy"].as_i64().unwrap_or(0);
    status["currentHealthy"].as_i64().unwrap_or(0) >= desired && desired > 0
}

/// The budget's verdict on one more disruption, spending it on `pod` when
/// allowed (recorded among the disrupted pods unless this is a dry run).
fn check_and_decrement(budget: &mut Value, pod: &str, dry_run: bool) -> ApiResult<()> {
    let name = budget["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let generation = budget["metadata"]["generation"].as_i64().unwrap_or(0);
    let status = &budget["status"];
    if status["observedGeneration"].as_i64().unwrap_or(0) < generation {
        return Err(still_processing(&name));
    }
    let target = Target {
        group: "policy",
        resource: "poddisruptionbudget",
        name: &name,
    };
    let allowed = status["disruptionsAllowed"].as_i64().unwrap_or(0);
    if allowed < 0 {
        return Err(ApiError::forbidden(
            target,
            "pdb disruptions allowed is negative",
        ));
    }
    let disrupted = status["disruptedPods"].as_object().map_or(0, Map::len);
    if disrupted > MAX_DISRUPTED_PODS {
        return Err(ApiError::forbidden(
            target,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        let cause = format!(
            "The disruption budget {name} needs {} healthy pods and has {} currently",
            status["desiredHealthy"].as_i64().unwrap_or(0),
            status["currentHealthy"].as_i64().unwrap_or(0)
        );
        return Err(ApiError::too_many_requests(
            VIOLATION,
            0,
            vec![budget_cause(cause)],
        ));
    }
    let observed = status["observedGeneration"].clone();
    let Some(status) = object_at(budget, "status") else {
        return Err(ApiError::internal("a budget's status is not an object"));
    };
    status.insert("disruptionsAllowed".into(), json!(allowed - 1));
    if allowed == 1 {
        set_disruption_allowed_false(status, observed);
    }
    if !dry_run {
        let now = now_value();
        let disrupted = status
            .entry("disruptedPods")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(map) = disrupted {
            map.insert(pod.to_owned(), now);
        } else {
            *disrupted = json!({ pod: now });
        }
    }
    Ok(())
}

/// The budget's `DisruptionAllowed` condition says no more disruptions
/// (`InsufficientPods`).
fn set_disruption_allowed_false(status: &mut Map<String, Value>, observed: Value) {
    set_condition(
        status,
        json!({
            "type": "DisruptionAllowed",
            "status": "False",
            "observedGeneration": observed,
            "lastTransitionTime": now_value(),
            "reason": "InsufficientPods",
            "message": "",
        }),
    );
}

/// The pod's `DisruptionTarget` condition: evicted by the eviction API.
fn add_disruption_target(pod: &mut Value) {
    if let Some(status) = object_at(pod, "status") {
        set_condition(
            status,
            json!({
                "type": "DisruptionTarget",
                "status": "True",
                "lastTransitionTime": now_value(),
                "reason": "EvictionByEvictionAPI",
                "message": "Eviction API: evicting",
            }),
        );
    }
}

/// Puts `condition` in `status.conditions` in place of the one of its type;
/// the transition time stays when the condition's status does not change.
fn set_condition(status: &mut Map<String, Value>, condition: Value) {
    let conditions = status
        .entry("conditions")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !conditions.is_array() {
        *conditions = Value::Array(Vec::new());
    }
    let Value::Array(conditions) = conditions else {
        return;
    };
    match conditions
        .iter_mut()
        .find(|c| c["type"] == condition["type"])
    {
        None => conditions.push(condition),
        Some(existing) => {
            let unchanged = existing["status"] == condition["status"];
            let transition = existing["lastTransitionTime"].clone();
            *existing = condition;
            if unchanged {
                existing["lastTransitionTime"] = transition;
            }
        }
    }
}

/// The delete's preconditions hold for the current pod (checked before the
/// pod is marked, with upstream's messages).
fn check_preconditions(pod: &Value, name: &str, pre: &Preconditions) -> ApiResult<()> {
    let target = Target {
        group: "",
        resource: "Pod",
        name,
    };
    let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    if let Some(want) = pre.uid.as_deref().filter(|u| !u.is_empty() && *u != uid) {
        return Err(ApiError::conflict(
            target,
            &format!(
                "the UID in the precondition ({want}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
            ),
        ));
    }
    let rv = pod["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default();
    if let Some(want) = pre
        .resource_version
        .as_deref()
        .filter(|v| !v.is_empty() && *v != rv)
    {
        return Err(ApiError::conflict(
            target,
            &format!(
                "the ResourceVersion in the precondition ({want}) does not match the ResourceVersion in record ({rv}). The object might have been modified"
            ),
        ));
    }
    Ok(())
}

/// 429 for a budget the disruption controller has not caught up with.
fn still_processing(budget: &str) -> ApiError {
    ApiError::too_many_requests(
        VIOLATION,
        10,
        vec![budget_cause(format!(
            "The disruption budget {budget} is still being processed by the server."
        ))],
    )
}

fn budget_cause(message: String) -> StatusCause {
    StatusCause {
        reason: Some("DisruptionBudget".into()),
        message: Some(message),
        field: None,
    }
}

/// `doc[key]` as a JSON object, created when absent or null.
fn object_at<'v>(doc: &'v mut Value, key: &str) -> Option<&'v mut Map<String, Value>> {
    let map = doc.as_object_mut()?;
    let slot = map.entry(key).or_insert_with(|| Value::Object(Map::new()));
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
}

fn now_value() -> Value {
    serde_json::to_value(Time::now()).unwrap_or(Value::Null)
}
