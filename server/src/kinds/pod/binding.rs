//! Binding a pod to a node: a create of a `Binding` (through `bindings` or a
//! pod's `binding` subresource) sets the pod's `spec.nodeName` once, adds the
//! binding's annotations to the pod and marks it `PodScheduled`, as
//! kube-apiserver's pod storage does for the scheduler. The binding itself is
//! not stored.

use async_trait::async_trait;

use crate::user::UserInfo;
use jiff::Timestamp;
use serde_json::{Map, Value, json};

use crate::api_error::{ApiError, ApiResult, Target};
use crate::registry::hooks::{Action, ActionBody};
use crate::registry::{Input, Object, Registry, Scope, check_namespace};

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
        let value = binding.to_value().map_err(ApiError::internal)?;
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
        let node = value["target"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        check_target(value["target"]["kind"].as_str().unwrap_or_default(), &node)?;
        let annotations = value["metadata"]["annotations"].as_object().cloned();
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
                assign(pod_scope, pod, binding_target, &node, annotations.as_ref())
            })
            .await?;
        Ok(None)
    }
}

/// The pod bound to `node`: refused (a conflict on `binding`, the pod's
/// `pods/binding`) when it is being deleted, already bound, or still gated.
fn assign(
    scope: Scope<'_>,
    pod: Object,
    binding: Target<'_>,
    node: &str,
    annotations: Option<&Map<String, Value>>,
) -> ApiResult<Object> {
    let name = binding.name;
    let mut value = pod.to_value().map_err(ApiError::internal)?;
    let conflict = |why: String| ApiError::conflict(binding, &why);
    if !value["metadata"]["deletionTimestamp"].is_null() {
        return Err(conflict(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        )));
    }
    if let Some(bound) = value["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        return Err(conflict(format!(
            "pod {name} is already assigned to node {bound:?}"
        )));
    }
    if value["spec"]["schedulingGates"]
        .as_array()
        .is_some_and(|g| !g.is_empty())
    {
        return Err(conflict(format!(
            "pod {name} has non-empty .spec.schedulingGates"
        )));
    }
    value["spec"]["nodeName"] = Value::String(node.to_owned());
    if let Some(annotations) = annotations.filter(|a| !a.is_empty()) {
        let meta = &mut value["metadata"];
        if !meta["annotations"].is_object() {
            meta["annotations"] = Value::Object(Map::new());
        }
        if let Some(existing) = meta["annotations"].as_object_mut() {
            existing.extend(annotations.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    mark_scheduled(&mut value["status"]);
    let input = Input::from_value(scope.entry, value)?;
    Ok(input.object)
}

/// Sets the `PodScheduled` condition to True (a new transition time only when
/// it changes), as upstream's UpdatePodCondition.
fn mark_scheduled(status: &mut Value) {
    if !status.is_object() {
        *status = Value::Object(Map::new());
    }
    let now = Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let conditions = &mut status["conditions"];
    if !conditions.is_array() {
        *conditions = Value::Array(Vec::new());
    }
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    match list.iter_mut().find(|c| c["type"] == "PodScheduled") {
        Some(c) if c["status"] == "True" => {}
        Some(c) => {
            c["status"] = json!("True");
            c["lastTransitionTime"] = json!(now);
        }
        None => list.push(json!({
            "type": "PodScheduled",
            "status": "True",
            "lastProbeTime": null,
            "lastTransitionTime": now,
        })),
    }
}
