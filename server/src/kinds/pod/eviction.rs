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

use async_trait::async_trait;
use kapi_api_types::core::v1::Pod;
use kapi_api_types::core::v1::pod::status::PodCondition;
use kapi_api_types::policy::v1::{Eviction, PodDisruptionBudget};
use kapi_runtime::meta::{Condition, DeleteOptions, Preconditions, StatusCause, Time};
use kapi_runtime::scheme::Scheme;
use serde_json::Value;

use crate::admission;
use crate::api_error::{ApiError, ApiResult, Target};
use crate::registry::hooks::{Action, ActionBody};
use crate::registry::{Endpoint, ListOptions, Object, Registry, Scope, WriteOptions};
use crate::selectors::label::LabelSelector;
use crate::user::UserInfo;

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
        // The body arrives as the JSON its type wrote (normalized at the
        // edge), read typed once here.
        let eviction: Eviction = serde_json::from_value(eviction).map_err(ApiError::internal)?;
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

/// Evicts pod `name` in `pods`' namespace as the Eviction body asks;
/// `dry_run` is the request's `dryRun=All`.
async fn evict(
    registry: &Registry,
    pods: Scope<'_>,
    name: &str,
    eviction: &Eviction,
    dry_run: bool,
    user: &UserInfo,
) -> ApiResult<()> {
    if eviction.metadata.name.as_deref().unwrap_or_default() != name {
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
        let object = registry.get(pods, name).await?;
        let pod = object
            .downcast_ref::<Pod>()
            .cloned()
            .ok_or_else(|| ApiError::internal("a pod of another type"))?;
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
        let budget_name = budget.metadata.name.as_deref().unwrap_or_default();
        guard = !is_ready(&pod) && spares_unhealthy(budget);
        if !guard {
            let dry = options.dry_run.as_ref().is_some_and(|d| !d.is_empty());
            let decrement = |object: &mut Object| match object.downcast_mut() {
                Some(budget) => check_and_decrement(budget, name, dry),
                None => Err(ApiError::internal("a budget of another type")),
            };
            if dry {
                check_and_decrement(&mut budget.clone(), name, dry)?;
            } else {
                registry
                    .edit_object(
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
                .and_then(|(_, b)| b.metadata.name.as_deref())
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
    pod: &Pod,
) -> ApiResult<Vec<(Scope<'s>, PodDisruptionBudget)>> {
    let Some(entry) = scheme.get("policy", "v1", "poddisruptionbudgets") else {
        return Ok(Vec::new());
    };
    let scope = Scope::new(entry, pods.namespace);
    let page = registry.list(scope, ListOptions::default()).await?;
    let labels = pod.metadata.labels.as_ref();
    let mut out = Vec::new();
    for item in page.items {
        let object = item.object().map_err(ApiError::internal)?;
        let Some(budget) = object.downcast_ref::<PodDisruptionBudget>() else {
            continue;
        };
        let selects = LabelSelector::from_meta(budget.spec.selector.as_ref())
            .is_ok_and(|selector| selector.matches(labels));
        if selects {
            out.push((scope, budget.clone()));
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
        let mark = |object: &mut Object| {
            check_preconditions(object, name, &preconditions)?;
            let pod = object
                .downcast_mut::<Pod>()
                .ok_or_else(|| ApiError::internal("a pod of another type"))?;
            add_disruption_target(pod);
            Ok(())
        };
        let written = registry
            .edit_object(pods, name, Endpoint::Status, &mark, WriteOptions::default())
            .await?;
        if let Some(pre) = options
            .preconditions
            .as_mut()
            .filter(|p| p.resource_version.is_some())
        {
            // This write moved the pod on: the pin follows it.
            pre.resource_version
                .clone_from(&written.decoded()?.metadata().resource_version);
        }
    }
    let opts = WriteOptions {
        user,
        ..WriteOptions::default()
    };
    registry.delete(pods, name, &options, &opts).await?;
    Ok(())
}

/// The eviction's DeleteOptions, with the request's dry run: both may ask for
/// one, but not for different ones.
fn delete_options(eviction: &Eviction, dry_run: bool) -> ApiResult<DeleteOptions> {
    let mut options = eviction.delete_options.clone().unwrap_or_default();
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
fn can_ignore_budgets(pod: &Pod) -> bool {
    matches!(
        pod.status.phase.as_deref(),
        Some("Succeeded" | "Failed" | "Pending")
    ) || pod.metadata.deletion_timestamp.is_some()
}

/// Whether the delete of a pod that skips the budgets must be pinned to the
/// version read (a pending pod could become ready meanwhile).
fn enforces_resource_version(pod: &Pod) -> bool {
    !matches!(pod.status.phase.as_deref(), Some("Succeeded" | "Failed"))
        && pod.metadata.deletion_timestamp.is_none()
}

fn pin_resource_version(options: &mut DeleteOptions, pod: &Pod) {
    options
        .preconditions
        .get_or_insert_with(Preconditions::default)
        .resource_version
        .clone_from(&pod.metadata.resource_version);
}

/// The pod's `Ready` condition is `True`.
fn is_ready(pod: &Pod) -> bool {
    pod.status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

/// Whether an unready pod may go without spending the budget: always under
/// `unhealthyPodEvictionPolicy: AlwaysAllow`, else (`IfHealthyBudget`) while
/// the budget has the healthy pods it wants.
fn spares_unhealthy(budget: &PodDisruptionBudget) -> bool {
    if budget.spec.unhealthy_pod_eviction_policy.as_deref() == Some("AlwaysAllow") {
        return true;
    }
    let status = &budget.status;
    status.current_healthy >= status.desired_healthy && status.desired_healthy > 0
}

/// The budget's verdict on one more disruption, spending it on `pod` when
/// allowed (recorded among the disrupted pods unless this is a dry run).
fn check_and_decrement(
    budget: &mut PodDisruptionBudget,
    pod: &str,
    dry_run: bool,
) -> ApiResult<()> {
    let name = budget.metadata.name.clone().unwrap_or_default();
    let generation = budget.metadata.generation.unwrap_or(0);
    let status = &mut budget.status;
    if status.observed_generation.unwrap_or(0) < generation {
        return Err(still_processing(&name));
    }
    let target = Target {
        group: "policy",
        resource: "poddisruptionbudget",
        name: &name,
    };
    let allowed = status.disruptions_allowed;
    if allowed < 0 {
        return Err(ApiError::forbidden(
            target,
            "pdb disruptions allowed is negative",
        ));
    }
    let disrupted = status.disrupted_pods.as_ref().map_or(0, |pods| pods.len());
    if disrupted > MAX_DISRUPTED_PODS {
        return Err(ApiError::forbidden(
            target,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        let cause = format!(
            "The disruption budget {name} needs {} healthy pods and has {} currently",
            status.desired_healthy, status.current_healthy
        );
        return Err(ApiError::too_many_requests(
            VIOLATION,
            0,
            vec![budget_cause(cause)],
        ));
    }
    status.disruptions_allowed = allowed - 1;
    if allowed == 1 {
        // The budget's `DisruptionAllowed` condition says no more
        // disruptions (`InsufficientPods`).
        let condition = Condition {
            type_: "DisruptionAllowed".to_owned(),
            status: "False".to_owned(),
            observed_generation: status.observed_generation,
            last_transition_time: Some(Time::now()),
            reason: "InsufficientPods".to_owned(),
            message: String::new(),
        };
        set_condition(status.conditions.get_or_insert_with(Vec::new), condition);
    }
    if !dry_run {
        status
            .disrupted_pods
            .get_or_insert_with(Default::default)
            .insert(pod.to_owned(), Time::now());
    }
    Ok(())
}

/// The pod's `DisruptionTarget` condition: evicted by the eviction API.
fn add_disruption_target(pod: &mut Pod) {
    let condition = PodCondition {
        type_: "DisruptionTarget".to_owned(),
        status: "True".to_owned(),
        last_transition_time: Some(Time::now()),
        reason: Some("EvictionByEvictionAPI".to_owned()),
        message: Some("Eviction API: evicting".to_owned()),
        ..PodCondition::default()
    };
    set_condition(
        pod.status.conditions.get_or_insert_with(Vec::new),
        condition,
    );
}

/// A status condition of a pod or a budget, as [`set_condition`] reads it.
trait StatusCondition {
    fn kind(&self) -> &str;
    fn status(&self) -> &str;
    fn transition(&mut self) -> &mut Option<Time>;
}

impl StatusCondition for Condition {
    fn kind(&self) -> &str {
        &self.type_
    }
    fn status(&self) -> &str {
        &self.status
    }
    fn transition(&mut self) -> &mut Option<Time> {
        &mut self.last_transition_time
    }
}

impl StatusCondition for PodCondition {
    fn kind(&self) -> &str {
        &self.type_
    }
    fn status(&self) -> &str {
        &self.status
    }
    fn transition(&mut self) -> &mut Option<Time> {
        &mut self.last_transition_time
    }
}

/// Puts `condition` in `conditions` in place of the one of its type; the
/// transition time stays when the condition's status does not change.
fn set_condition<C: StatusCondition>(conditions: &mut Vec<C>, condition: C) {
    match conditions.iter_mut().find(|c| c.kind() == condition.kind()) {
        None => conditions.push(condition),
        Some(existing) => {
            let kept = *existing.transition();
            let unchanged = existing.status() == condition.status();
            *existing = condition;
            if unchanged {
                *existing.transition() = kept;
            }
        }
    }
}

/// The delete's preconditions hold for the current pod (checked before the
/// pod is marked, with upstream's messages).
fn check_preconditions(pod: &Object, name: &str, pre: &Preconditions) -> ApiResult<()> {
    let target = Target {
        group: "",
        resource: "Pod",
        name,
    };
    let meta = pod.metadata();
    let uid = meta.uid.as_deref().unwrap_or_default();
    if let Some(want) = pre.uid.as_deref().filter(|u| !u.is_empty() && *u != uid) {
        return Err(ApiError::conflict(
            target,
            &format!(
                "the UID in the precondition ({want}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
            ),
        ));
    }
    let rv = meta.resource_version.as_deref().unwrap_or_default();
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
