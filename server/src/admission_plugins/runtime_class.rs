//! RuntimeClass (plugin/pkg/admission/runtimeclass): a pod naming a
//! RuntimeClass must name one that exists, and takes the class's pod
//! overhead and scheduling (node selector and tolerations) on create.

use std::collections::BTreeMap;

use kapi_api_types::core::v1::Pod;
use kapi_api_types::core::v1::pod::affinity::Toleration;
use kapi_api_types::core::v1::pod::spec::PodSpec;
use kapi_api_types::node::v1::RuntimeClass as Class;
use kapi_api_types::node::v1::runtimeclass::Scheduling;
use kapi_runtime::Quantity;

use crate::admission::{Attributes, Operation, Plugin, Request, Subject, View};
use crate::api_error::ApiResult;
use crate::loopback::{self, Loopback};
use async_trait::async_trait;

/// Applies the pod's RuntimeClass to a pod being created.
pub async fn admit_pod(
    objects: &dyn Loopback,
    attrs: &Attributes<'_>,
    pod: &mut Pod,
) -> ApiResult<()> {
    let spec = &mut pod.spec;
    let class = match spec.runtime_class_name.as_deref() {
        Some(name) if loopback::serves::<Class>(objects) => {
            let class = loopback::get::<Class>(objects, None, name).await?;
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
        .and_then(|c| c.overhead.as_ref())
        .and_then(|o| o.pod_fixed.as_ref());
    let given = spec.overhead.as_ref().filter(|o| !o.is_empty());
    match overhead {
        Some(fixed) => {
            if given.is_some_and(|given| !same_resources(given, fixed)) {
                return Err(attrs.forbidden(
                    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
                ));
            }
            spec.overhead = Some(fixed.clone());
        }
        None => {
            if given.is_some() {
                return Err(attrs.forbidden(
                    "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
                ));
            }
        }
    }
    if let Some(scheduling) = class.as_ref().and_then(|c| c.scheduling.as_ref()) {
        apply_scheduling(attrs, spec, scheduling)?;
    }
    Ok(())
}

/// Whether two resource lists hold the same quantities.
fn same_resources(a: &BTreeMap<String, Quantity>, b: &BTreeMap<String, Quantity>) -> bool {
    let value = |q: &Quantity| kapi_runtime::quantity::nano_value(&q.0);
    a.len() == b.len()
        && a.iter()
            .all(|(key, v)| b.get(key).is_some_and(|w| value(v) == value(w)))
}

/// Adds the class's node selector (a pod asking for another value of one of
/// its labels is refused) and tolerations (merged, the broader kept).
fn apply_scheduling(
    attrs: &Attributes<'_>,
    spec: &mut PodSpec,
    scheduling: &Scheduling,
) -> ApiResult<()> {
    if let Some(selector) = &scheduling.node_selector {
        let pod_selector = spec.node_selector.clone().unwrap_or_default();
        let mut merged = pod_selector.clone();
        for (key, value) in selector {
            if let Some(pod_value) = pod_selector.get(key).filter(|v| *v != value) {
                return Err(attrs.forbidden(&format!(
                    "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; pod.spec.nodeSelector[{key}] = {pod_value}"
                )));
            }
            merged.insert(key.clone(), value.clone());
        }
        spec.node_selector = Some(merged);
    }
    if let Some(extra) = scheduling.tolerations.as_ref().filter(|t| !t.is_empty()) {
        let mut all = spec.tolerations.clone().unwrap_or_default();
        all.extend(extra.iter().cloned());
        spec.tolerations = Some(merge_tolerations(&all));
    }
    Ok(())
}

/// Drops every toleration another one covers (of two equal ones, the first
/// stays), keeping the order (`tolerations.MergeTolerations`).
fn merge_tolerations(all: &[Toleration]) -> Vec<Toleration> {
    let mut merged: Vec<Toleration> = Vec::new();
    for (i, t) in all.iter().enumerate() {
        let covered_before = merged.iter().any(|kept| covers(kept, t));
        let covered_after = all[i + 1..]
            .iter()
            .any(|later| !same(later, t) && covers(later, t));
        if !covered_before && !covered_after {
            merged.push(t.clone());
        }
    }
    merged
}

/// A toleration's text field; Go's empty string when unset.
fn text(field: &Option<String>) -> &str {
    field.as_deref().unwrap_or_default()
}

/// Whether two tolerations are equal (as Go compares them: an empty text
/// field is an unset one).
fn same(a: &Toleration, b: &Toleration) -> bool {
    text(&a.key) == text(&b.key)
        && text(&a.operator) == text(&b.operator)
        && text(&a.value) == text(&b.value)
        && text(&a.effect) == text(&b.effect)
        && a.toleration_seconds == b.toleration_seconds
}

/// Whether toleration `wide` tolerates everything `t` does.
fn covers(wide: &Toleration, t: &Toleration) -> bool {
    if same(wide, t) {
        return true;
    }
    let (key, wide_key) = (text(&t.key), text(&wide.key));
    let wide_operator = text(&wide.operator);
    if key != wide_key && (!wide_key.is_empty() || wide_operator != "Exists") {
        return false;
    }
    let wide_effect = text(&wide.effect);
    if text(&t.effect) != wide_effect && !wide_effect.is_empty() {
        return false;
    }
    if wide_effect == "NoExecute"
        && let Some(limit) = wide.toleration_seconds
        && t.toleration_seconds.is_none_or(|seconds| seconds > limit)
    {
        return false;
    }
    match wide_operator {
        "Equal" | "" => text(&t.operator) == "Equal" && text(&t.value) == text(&wide.value),
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
        request.operation == Operation::Create && request.is_kind::<Pod>()
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        match object.downcast_mut::<Pod>()? {
            Some(pod) => admit_pod(objects, &request.attrs, pod).await,
            None => Ok(()),
        }
    }
}
