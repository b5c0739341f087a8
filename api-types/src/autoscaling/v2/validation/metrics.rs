//! `validateMetrics`: each metric names its source type and carries exactly
//! that source, with a metric, a target and the target values it needs.

use kapi_runtime::Quantity;
use kapi_runtime::validation::{FieldErrors, FieldPath, dns1123_label_errors};

use super::super::metric::{
    ContainerResourceMetricSource, ExternalMetricSource, MetricIdentifier, MetricSpec,
    MetricTarget, ObjectMetricSource, PodsMetricSource, ResourceMetricSource,
};
use super::object_reference;
use crate::core::v1::pod::validation::container_resource_name;
use crate::validation::{path_segment_name, quantity_value};

/// The metric source types, sorted as upstream lists them.
const SOURCE_TYPES: &[&str] = &[
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];
/// Why a source is missing.
const POPULATE: &str = "must populate information for the given metric source";
/// Why a resource target is incomplete or overfull.
const RAW_OR_UTILIZATION: &str = "must set either a target raw value or a target utilization";
const NOT_BOTH_RAW_AND_UTILIZATION: &str =
    "may not set both a target raw value and a target utilization";

/// The metrics of a spec; scaling to zero needs an object or external one.
pub(super) fn validate_metrics(
    metrics: &[MetricSpec],
    min_replicas: Option<i32>,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    for (i, metric) in metrics.iter().enumerate() {
        metric_spec(metric, &path.index(i), errs);
    }
    let scales_to_zero_with = metrics
        .iter()
        .any(|m| matches!(m.type_.as_str(), "Object" | "External"));
    if min_replicas == Some(0) && !scales_to_zero_with {
        errs.forbidden(
            path.clone(),
            "must specify at least one Object or External metric to support scaling to zero replicas",
        );
    }
}

/// `validateMetricSpec`. Only the first source present is checked; an
/// unknown type is reported twice, as upstream does.
fn metric_spec(spec: &MetricSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let type_ = spec.type_.as_str();
    if type_.is_empty() {
        errs.required(path.child("type"), "must specify a metric source type");
    }
    if !SOURCE_TYPES.contains(&type_) {
        errs.not_supported(path.child("type"), type_, SOURCE_TYPES);
    }
    let present: Vec<&str> = [
        ("object", spec.object.is_some()),
        ("external", spec.external.is_some()),
        ("pods", spec.pods.is_some()),
        ("resource", spec.resource.is_some()),
        ("containerResource", spec.container_resource.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect();
    if let Some(src) = &spec.object {
        object(src, &path.child("object"), errs);
    } else if let Some(src) = &spec.external {
        external(src, &path.child("external"), errs);
    } else if let Some(src) = &spec.pods {
        pods(src, &path.child("pods"), errs);
    } else if let Some(src) = &spec.resource {
        resource(src, &path.child("resource"), errs);
    } else if let Some(src) = &spec.container_resource {
        container_resource(src, &path.child("containerResource"), errs);
    }
    let expected = match type_ {
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        "External" => "external",
        "ContainerResource" => "containerResource",
        _ => {
            errs.not_supported(path.child("type"), type_, SOURCE_TYPES);
            ""
        }
    };
    if !expected.is_empty() && !present.contains(&expected) {
        errs.required(path.child(expected), POPULATE);
    }
    if present.len() != 1 {
        for other in present.iter().filter(|p| **p != expected) {
            errs.forbidden(
                path.child(other),
                "must populate the given metric source only",
            );
        }
    }
}

fn object(src: &ObjectMetricSource, path: &FieldPath, errs: &mut FieldErrors) {
    object_reference(&src.described_object, &path.child("describedObject"), errs);
    identifier(&src.metric, &path.child("metric"), errs);
    target(&src.target, &path.child("target"), errs);
    if src.target.value.is_none() && src.target.average_value.is_none() {
        errs.required(
            path.child("target").child("averageValue"),
            "must set either a target value or averageValue",
        );
    }
}

fn external(src: &ExternalMetricSource, path: &FieldPath, errs: &mut FieldErrors) {
    identifier(&src.metric, &path.child("metric"), errs);
    target(&src.target, &path.child("target"), errs);
    match (&src.target.value, &src.target.average_value) {
        (None, None) => errs.required(
            path.child("target").child("averageValue"),
            "must set either a target value for metric or a per-pod target",
        ),
        (Some(_), Some(_)) => errs.forbidden(
            path.child("target").child("value"),
            "may not set both a target value for metric and a per-pod target",
        ),
        _ => {}
    }
}

fn pods(src: &PodsMetricSource, path: &FieldPath, errs: &mut FieldErrors) {
    identifier(&src.metric, &path.child("metric"), errs);
    target(&src.target, &path.child("target"), errs);
    if src.target.average_value.is_none() {
        errs.required(
            path.child("target").child("averageValue"),
            "must specify a positive target averageValue",
        );
    }
}

fn resource(src: &ResourceMetricSource, path: &FieldPath, errs: &mut FieldErrors) {
    if src.name.is_empty() {
        errs.required(path.child("name"), "must specify a resource name");
    }
    resource_target(&src.target, &path.child("target"), errs);
}

fn container_resource(
    src: &ContainerResourceMetricSource,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if src.name.is_empty() {
        errs.required(path.child("name"), "must specify a resource name");
    } else {
        container_resource_name(&src.name, &path.child("name"), errs);
    }
    if src.container.is_empty() {
        errs.required(path.child("container"), "must specify a container");
    } else {
        for detail in dns1123_label_errors(&src.container) {
            errs.invalid(path.child("container"), src.container.as_str(), &detail);
        }
    }
    resource_target(&src.target, &path.child("target"), errs);
}

/// The target of a (container) resource metric: a utilization or a raw
/// average value, not both.
fn resource_target(t: &MetricTarget, path: &FieldPath, errs: &mut FieldErrors) {
    target(t, path, errs);
    match (t.average_utilization, &t.average_value) {
        (None, None) => errs.required(path.child("averageUtilization"), RAW_OR_UTILIZATION),
        (Some(_), Some(_)) => {
            errs.forbidden(path.child("averageValue"), NOT_BOTH_RAW_AND_UTILIZATION)
        }
        _ => {}
    }
}

/// `validateMetricTarget`.
fn target(t: &MetricTarget, path: &FieldPath, errs: &mut FieldErrors) {
    let type_ = t.type_.as_str();
    if type_.is_empty() {
        errs.required(path.child("type"), "must specify a metric target type");
    }
    if !matches!(type_, "Utilization" | "Value" | "AverageValue") {
        errs.invalid(
            path.child("type"),
            type_,
            "must be either Utilization, Value, or AverageValue",
        );
    }
    for (field, quantity) in [("value", &t.value), ("averageValue", &t.average_value)] {
        if let Some(q) = quantity {
            positive(q, &path.child(field), errs);
        }
    }
    if let Some(utilization) = t.average_utilization
        && utilization < 1
    {
        errs.invalid(
            path.child("averageUtilization"),
            utilization,
            "must be greater than 0",
        );
    }
}

/// A quantity above zero (`Sign() == 1`).
fn positive(quantity: &Quantity, path: &FieldPath, errs: &mut FieldErrors) {
    if quantity_value(quantity).is_some_and(|v| v <= 0.0) {
        errs.invalid(path.clone(), quantity.0.as_str(), "must be positive");
    }
}

/// `validateMetricIdentifier`.
fn identifier(id: &MetricIdentifier, path: &FieldPath, errs: &mut FieldErrors) {
    if id.name.is_empty() {
        errs.required(path.child("name"), "must specify a metric name");
    } else {
        path_segment_name(&id.name, &path.child("name"), errs);
    }
}
