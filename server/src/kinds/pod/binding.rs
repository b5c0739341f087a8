//! Binding a pod to a node: a create of a `Binding` (through `bindings` or a
//! pod's `binding` subresource) sets the pod's `spec.nodeName` once, adds the
//! binding's annotations to the pod and marks it `PodScheduled`, as
//! kube-apiserver's pod storage does for the scheduler. The binding itself is
//! not stored.

use async_trait::async_trait;

use std::collections::BTreeMap;

use kapi_api_types::core::v1::Pod;
use kapi_api_types::core::v1::binding::Binding;
use kapi_api_types::core::v1::pod::status::PodCondition;
use kapi_runtime::meta::Time;
use serde_json::Value;

use crate::user::UserInfo;

use crate::api_error::{ApiError, ApiResult, Target};
use crate::registry::hooks::{Action, ActionBody};
use crate::registry::{Object, Registry, Scope, check_namespace};

/// `ValidatePodBinding`: a node target with a name. Upstream reports these
/// as a plain error (a 500 whose message joins the problems, as Go's
/// aggregate prints them), not as an invalid object.
fn check_target(kind: &str, node: &str) -> ApiResult<()> {
    let mut problems = Vec::new();
    if !matches!(kind, "" | "Node") {
        problems.push(format!(
            "target.kind: Unsupported value: {kind:?}: supported values: \"Node\", \"<empty>\""
        ));
    }
    if node.is_empty() {
        problems.push("target.name: Required value".to_owned());
    }
    match problems.as_slice() {
        [] => Ok(()),
        [one] => Err(ApiError::plain(one.clone())),
        _ => Err(ApiError::plain(format!("[{}]", problems.join(", ")))),
    }
}

/// The create of a Binding, through `bindings` or `pods/<name>/binding`.
pub struct Bind;

#[async_trait]
impl Action for Bind {
    /// Binds the pod the binding names (`pod` is the name from a
    /// `pods/<name>/binding` path, which must agree with the body); a dry run
    /// checks everything and writes nothing.
    async fn act(
        &self,
        registry: &Registry,
        scope: Scope<'_>,
        pod: Option<&str>,
        body: ActionBody,
        dry_run: bool,
        _user: &UserInfo,
    ) -> ApiResult<Option<Value>> {
        let ActionBody::Object(input) = body else {
            return Err(ApiError::internal("a binding is decoded as an object"));
        };
        let scheme = registry.scheme();
        let bindings = scheme
            .get("", "v1", "bindings")
            .ok_or_else(ApiError::no_route)?;
        let mut binding = input.object;
        check_namespace(
            Scope::new(bindings, scope.namespace),
            binding.metadata_mut(),
        )?;
        let name = binding.metadata().name().to_owned();
        if pod.is_some_and(|pod| pod != name) {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Binding object",
            ));
        }
        let errors = binding.typed_mut().admit();
        if !errors.is_empty() {
            return Err(ApiError::invalid("", "Binding", &name, &errors));
        }
        let binding = binding
            .downcast_ref::<Binding>()
            .ok_or_else(|| ApiError::internal("a binding is decoded as a Binding"))?;
        let node = binding.target.name.clone().unwrap_or_default();
        check_target(binding.target.kind.as_deref().unwrap_or_default(), &node)?;
        let annotations = binding.metadata.annotations.clone();
        let scheme = registry.scheme();
        let pods = scheme
            .get("", "v1", "pods")
            .ok_or_else(|| ApiError::internal("bindings are served without pods"))?;
        let pod_scope = Scope::new(pods, scope.namespace);
        let binding_target = Target {
            group: "",
            resource: "pods/binding",
            name: &name,
        };
        registry
            .change_stored(pod_scope, &name, dry_run, &mut |pod| {
                assign(pod, binding_target, &node, annotations.as_ref())
            })
            .await?;
        Ok(None)
    }
}

/// The pod bound to `node`: refused (a conflict on `binding`, the pod's
/// `pods/binding`) when it is being deleted, already bound, or still gated.
fn assign(
    mut object: Object,
    binding: Target<'_>,
    node: &str,
    annotations: Option<&BTreeMap<String, String>>,
) -> ApiResult<Object> {
    let name = binding.name;
    let conflict = |why: String| ApiError::conflict(binding, &why);
    let pod = object
        .downcast_mut::<Pod>()
        .ok_or_else(|| ApiError::internal("pods are decoded as a Pod"))?;
    if pod.metadata.deletion_timestamp.is_some() {
        return Err(conflict(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        )));
    }
    if let Some(bound) = pod.spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        return Err(conflict(format!(
            "pod {name} is already assigned to node {bound:?}"
        )));
    }
    if pod
        .spec
        .scheduling_gates
        .as_ref()
        .is_some_and(|g| !g.is_empty())
    {
        return Err(conflict(format!(
            "pod {name} has non-empty .spec.schedulingGates"
        )));
    }
    pod.spec.node_name = Some(node.to_owned());
    if let Some(annotations) = annotations.filter(|a| !a.is_empty()) {
        let existing = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
        existing.extend(annotations.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    mark_scheduled(pod);
    Ok(object)
}

/// Sets the `PodScheduled` condition to True (a new transition time only when
/// it changes), as upstream's UpdatePodCondition.
fn mark_scheduled(pod: &mut Pod) {
    let now = Time::now();
    let conditions = pod.status.conditions.get_or_insert_with(Vec::new);
    match conditions.iter_mut().find(|c| c.type_ == "PodScheduled") {
        Some(c) if c.status == "True" => {}
        Some(c) => {
            c.status = "True".to_owned();
            c.last_transition_time = Some(now);
        }
        None => conditions.push(PodCondition {
            type_: "PodScheduled".to_owned(),
            status: "True".to_owned(),
            last_transition_time: Some(now),
            ..PodCondition::default()
        }),
    }
}
