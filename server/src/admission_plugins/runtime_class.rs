//! RuntimeClass (plugin/pkg/admission/runtimeclass): a pod naming a
//! RuntimeClass must name one that exists, and takes the class's pod
//! overhead and scheduling (node selector and tolerations) on create.

use serde_json::{Map, Value};

use super::array_at;
use crate::admission::{Attributes, Operation, Plugin, Request, Subject, View};
use crate::api_error::ApiResult;
use crate::loopback::Loopback;
use async_trait::async_trait;

const RUNTIME_CLASSES: (&str, &str, &str) = ("node.k8s.io", "v1", "runtimeclasses");

/// Applies the pod's RuntimeClass to a pod being created.
pub async fn admit_pod(
    objects: &dyn Loopback,
    attrs: &Attributes<'_>,
    pod: &mut Value,
) -> ApiResult<()> {
    let spec = &mut pod["spec"];
    let class = match spec["runtimeClassName"].as_str() {
        Some(name) if objects.serves(RUNTIME_CLASSES) => {
            let class = objects.read(RUNTIME_CLASSES, None, name).await?;
            let Some(class) = class else {
                return Err(
                    attrs.forbidden(&format!("pod rejected: RuntimeClass {name:?} not found"))
                );
            };
            Some(class)
        }
        _ => None,
    };
    let overhead = class
        .as_ref()
        .and_then(|c| c["overhead"]["podFixed"].as_object());
    match overhead {
        Some(fixed) => {
            let given = spec["overhead"].as_object().filter(|o| !o.is_empty());
            if given.is_some_and(|given| !same_resources(given, fixed)) {
                return Err(attrs.forbidden(
                    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
                ));
            }
            spec["overhead"] = Value::Object(fixed.clone());
        }
        None => {
            if spec["overhead"].as_object().is_some_and(|o| !o.is_empty()) {
                return Err(attrs.forbidden(
                    "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
                ));
            }
        }
    }
    if let Some(scheduling) = class
        .as_ref()
        .map(|c| &c["scheduling"])
        .filter(|s| s.is_object())
    {
        apply_scheduling(attrs, spec, scheduling)?;
    }
    Ok(())
}

/// Whether two resource lists hold the same quantities.
fn same_resources(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    let value = |v: &Value| v.as_str().and_then(kapi_runtime::quantity::nano_value);
    a.len() == b.len()
        && a.iter()
            .all(|(key, v)| b.get(key).is_some_and(|w| value(v) == value(w)))
}

/// Adds the class's node selector (a pod asking for another value of one of
/// its labels is refused) and tolerations (merged, the broader kept).
fn apply_scheduling(attrs: &Attributes<'_>, spec: &mut Value, scheduling: &Value) -> ApiResult<()> {
    if let Some(selector) = scheduling["nodeSelector"].as_object() {
        let pod_selector = spec["nodeSelector"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let mut merged = pod_selector.clone();
        for (key, value) in selector {
            if let Some(pod_value) = pod_selector.get(key).filter(|v| *v != value) {
                return Err(attrs.forbidden(&format!(
                    "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {}; pod.spec.nodeSelector[{key}] = {}",
                    value.as_str().unwrap_or_default(),
                    pod_value.as_str().unwrap_or_default()
                )));
            }
            merged.insert(key.clone(), value.clone());
        }
        spec["nodeSelector"] = Value::Object(merged);
    }
    if let Some(extra) = scheduling["tolerations"]
        .as_array()
        .filter(|t| !t.is_empty())
    {
        let mut all = spec["tolerations"].as_array().cloned().unwrap_or_default();
        all.extend(extra.iter().cloned());
        if let Some(tolerations) = array_at(spec, "tolerations") {
            *tolerations = merge_tolerations(&all);
        }
    }
    Ok(())
}

/// Drops every toleration another one covers (of two equal ones, the first
/// stays), keeping the order (`tolerations.MergeTolerations`).
fn merge_tolerations(all: &[Value]) -> Vec<Value> {
    let mut merged: Vec<Value> = Vec::new();
    for (i, t) in all.iter().enumerate() {
        let covered_before = merged.iter().any(|kept| covers(kept, t));
        let covered_after = all[i + 1..]
            .iter()
            .any(|later| later != t && covers(later, t));
        if !covered_before && !covered_after {
            merged.push(t.clone());
        }
    }
    merged
}

/// Whether toleration `wide` tolerates everything `t` does.
fn covers(wide: &Value, t: &Value) -> bool {
    if wide == t {
        return true;
    }
    let text = |v: &Value, key: &str| v[key].as_str().unwrap_or_default().to_owned();
    let (key, wide_key) = (text(t, "key"), text(wide, "key"));
    let wide_operator = text(wide, "operator");
    if key != wide_key && (!wide_key.is_empty() || wide_operator != "Exists") {
        return false;
    }
    let wide_effect = text(wide, "effect");
    if text(t, "effect") != wide_effect && !wide_effect.is_empty() {
        return false;
    }
    if wide_effect == "NoExecute"
        && let Some(limit) = wide["tolerationSeconds"].as_i64()
        && t["tolerationSeconds"]
            .as_i64()
            .is_none_or(|seconds| seconds > limit)
    {
        return false;
    }
    match wide_operator.as_str() {
        "Equal" | "" => text(t, "operator") == "Equal" && text(t, "value") == text(wide, "value"),
        "Exists" => true,
        _ => false,
    }
}

/// RuntimeClass: a pod's runtime class exists, and adds its overhead and
/// scheduling constraints.
pub struct RuntimeClass;

#[async_trait]
impl Plugin for RuntimeClass {
    fn name(&self) -> &'static str {
        "RuntimeClass"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Create && request.is("", "pods")
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        admit_pod(objects, &request.attrs, object).await
    }
}
