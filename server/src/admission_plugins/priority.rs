//! Priority (plugin/pkg/admission/priority): a pod's `priority` and
//! `preemptionPolicy` come from its PriorityClass (the global default class
//! when it names none; priority 0 when there is none), a pod naming an unknown
//! class is refused, at most one class is the global default, and the system
//! classes, which the server makes at start, are never deleted.

use serde_json::{Value, json};

use kapi_api_types::core::v1::Pod;
use kapi_api_types::scheduling::v1::PriorityClass;

use crate::admission::{Attributes, Operation, Plugin, Request, Subject, View};
use crate::api_error::{ApiError, ApiResult, Target};
use crate::loopback::{self, Loopback, Resource};
use crate::scope::Scope;
use async_trait::async_trait;

const CLASSES: (&str, &str, &str) = ("scheduling.k8s.io", "v1", "priorityclasses");

/// The classes every cluster has: name, value and description, as
/// kube-apiserver creates them at start.
pub const SYSTEM_CLASSES: &[(&str, i64, &str)] = &[
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// The policy of pods when no class says otherwise.
const DEFAULT_PREEMPTION_POLICY: &str = "PreemptLowerPriority";

/// Fills the priority of a pod being created from its class.
pub async fn admit_pod(
    objects: &dyn Loopback,
    attrs: &Attributes<'_>,
    pod: &mut Pod,
) -> ApiResult<()> {
    if !loopback::serves::<PriorityClass>(objects) {
        return Ok(());
    }
    let spec = &mut pod.spec;
    let named = spec.priority_class_name.clone().unwrap_or_default();
    let (class_name, priority, policy) = if named.is_empty() {
        match default_class(objects).await? {
            Some(class) => (
                class.metadata.name.unwrap_or_default(),
                i64::from(class.value),
                class.preemption_policy,
            ),
            None => (String::new(), 0, Some(DEFAULT_PREEMPTION_POLICY.to_owned())),
        }
    } else {
        let Some(class) = loopback::get::<PriorityClass>(objects, None, &named).await? else {
            return Err(attrs.forbidden(&format!("no PriorityClass with name {named} was found")));
        };
        (named, i64::from(class.value), class.preemption_policy)
    };
    if !class_name.is_empty() {
        spec.priority_class_name = Some(class_name);
    }
    if let Some(given) = spec
        .priority
        .map(i64::from)
        .filter(|given| *given != priority)
    {
        return Err(attrs.forbidden(&format!(
            "the integer value of priority ({given}) must not be provided in pod spec; \
             priority admission controller computed {priority} from the given PriorityClass name"
        )));
    }
    // A class's value is an int32 (validated so when the class was written).
    spec.priority = Some(i32::try_from(priority).map_err(ApiError::internal)?);
    if let Some(policy) = policy {
        if let Some(given) = spec
            .preemption_policy
            .as_deref()
            .filter(|given| *given != policy)
        {
            return Err(attrs.forbidden(&format!(
                "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; \
                 priority admission controller computed {policy} from the given PriorityClass name"
            )));
        }
        spec.preemption_policy = Some(policy);
    }
    Ok(())
}

/// The global default class: of several, the one with the lowest value.
async fn default_class(objects: &dyn Loopback) -> ApiResult<Option<PriorityClass>> {
    let classes = loopback::list::<PriorityClass>(objects, None).await?;
    Ok(classes
        .into_iter()
        .filter(|class| class.global_default == Some(true))
        .min_by_key(|class| class.value))
}

/// The name of the global default class, if there is one.
pub async fn default_class_name(objects: &dyn Loopback) -> ApiResult<Option<String>> {
    let class = default_class(objects).await?;
    Ok(class.and_then(|c| c.metadata.name))
}

/// The refusal of class `name` as global default while `present` is.
pub fn second_default(scope: Scope<'_>, name: &str, present: &str) -> ApiError {
    ApiError::forbidden(
        scope.target(name),
        &format!(
            "PriorityClass {present} is already marked as default. Only one default can exist"
        ),
    )
}

/// Refuses the deletion of a system class.
pub fn admit_class_delete(scope: Scope<'_>, name: &str) -> ApiResult<()> {
    if SYSTEM_CLASSES.iter().any(|(system, ..)| *system == name) {
        return Err(ApiError::forbidden(
            Target {
                group: scope.info().group,
                resource: scope.info().plural,
                name,
            },
            "this is a system priority class and cannot be deleted",
        ));
    }
    Ok(())
}

/// The system classes every cluster has, as bodies to create at start-up
/// (kube-apiserver's post-start hook creates them).
pub fn system_classes() -> impl Iterator<Item = (Resource<'static>, Value)> {
    SYSTEM_CLASSES.iter().map(|(name, value, description)| {
        let body = json!({
            "metadata": { "name": name },
            "value": value,
            "description": description,
        });
        (CLASSES, body)
    })
}

/// Priority: a pod gets its class's priority; a class cannot be a second
/// global default, nor a system class be deleted.
pub struct Priority;

#[async_trait]
impl Plugin for Priority {
    fn name(&self) -> &'static str {
        "Priority"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.is_kind::<Pod>()
            && (request.operation == Operation::Create || request.main_update())
    }

    fn judges(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Delete && request.is_kind::<PriorityClass>()
    }

    async fn judge(&self, request: &Request<'_>, _objects: &dyn Loopback) -> ApiResult<()> {
        admit_class_delete(request.attrs.scope, &request.attrs.name)
    }

    fn validates(&self, request: &Request<'_>) -> bool {
        request.is_kind::<PriorityClass>()
            && (request.operation == Operation::Create || request.main_update())
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let Some(pod) = object.downcast_mut::<Pod>()? else {
            return Ok(());
        };
        match old {
            None => admit_pod(objects, &request.attrs, pod).await,
            // An update keeps the priority admission gave the pod.
            Some(old) => {
                if let Some(old) = old.downcast_ref::<Pod>() {
                    super::update::keep_priority(old, pod);
                }
                Ok(())
            }
        }
    }

    async fn validate(
        &self,
        request: &Request<'_>,
        object: &View<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
        _warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let attrs = &request.attrs;
        let global_default = object
            .downcast_ref::<PriorityClass>()
            .is_some_and(|class| class.global_default == Some(true));
        if !global_default {
            return Ok(());
        }
        // An update may keep the class that is the default already.
        let updated = request.operation == Operation::Update;
        match default_class_name(objects).await? {
            Some(present) if !(updated && present == attrs.name) => {
                Err(second_default(attrs.scope, &attrs.name, &present))
            }
            _ => Ok(()),
        }
    }
}
