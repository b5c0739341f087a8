//! `ValidateLimitRange`: the type of each entry (a standard one or a
//! qualified name, each at most once), the resource names it may bound, and
//! the order of the bounds per resource: min <= defaultRequest <= default <=
//! max, a limit/request ratio of at least 1 and within max/min. Quantities may
//! be negative here: upstream checks no sign.

use std::collections::{BTreeMap, BTreeSet};

use kapi_runtime::Quantity;
use kapi_runtime::quantity::nano_value;
use kapi_runtime::validation::{FieldErrors, FieldPath, qualified_name_errors};

use super::resource_names::{
    GoQuantity, container_resource_name, overcommit_allowed, resource_name,
};
use crate::core::v1::limitrange::{LimitRangeItem, LimitRangeSpec};

/// The `LimitRangeSpec` hook.
pub(crate) fn validate_limit_range_spec(
    spec: &LimitRangeSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let mut types = BTreeSet::new();
    let limits_path = path.child("limits");
    for (i, item) in spec.limits.iter().enumerate() {
        let item_path = limits_path.index(i);
        limit_type(&item.type_, &item_path.child("type"), errs);
        if !types.insert(item.type_.as_str()) {
            errs.duplicate(item_path.child("type"), item.type_.as_str());
        }
        limit_item(item, &item_path, errs);
    }
}

/// `validateLimitRangeTypeName`: a qualified name, standard without a domain.
fn limit_type(type_: &str, path: &FieldPath, errs: &mut FieldErrors) {
    let problems = qualified_name_errors(type_);
    for detail in &problems {
        errs.invalid(path.clone(), type_, detail);
    }
    if problems.is_empty()
        && !type_.contains('/')
        && !matches!(type_, "Pod" | "Container" | "PersistentVolumeClaim")
    {
        errs.invalid(
            path.clone(),
            type_,
            "must be a standard limit type or fully qualified",
        );
    }
}

type Bounds = BTreeMap<String, Quantity>;

/// The bounds of one entry: their resource names, then their order.
fn limit_item(item: &LimitRangeItem, path: &FieldPath, errs: &mut FieldErrors) {
    let empty = Bounds::new();
    let list = |l: &Option<Bounds>| l.as_ref().unwrap_or(&empty).clone();
    let (max, min) = (list(&item.max), list(&item.min));
    let is_pod = item.type_ == "Pod";
    let name_check = |name: &str, path: &FieldPath, errs: &mut FieldErrors| {
        if matches!(item.type_.as_str(), "Pod" | "Container") {
            container_resource_name(name, path, errs);
        } else {
            resource_name(name, path, errs);
        }
    };
    let names = |field: &str, bounds: &Bounds, errs: &mut FieldErrors| {
        for name in bounds.keys() {
            name_check(name, &path.child(field).key(name), errs);
        }
    };
    names("max", &max, errs);
    names("min", &min, errs);
    let (mut default, mut default_request) = (Bounds::new(), Bounds::new());
    if is_pod {
        if item.default.as_ref().is_some_and(|d| !d.is_empty()) {
            errs.forbidden(
                path.child("default"),
                "may not be specified when `type` is 'Pod'",
            );
        }
        if item.default_request.as_ref().is_some_and(|d| !d.is_empty()) {
            errs.forbidden(
                path.child("defaultRequest"),
                "may not be specified when `type` is 'Pod'",
            );
        }
    } else {
        default = list(&item.default);
        default_request = list(&item.default_request);
        names("default", &default, errs);
        names("defaultRequest", &default_request, errs);
    }
    if item.type_ == "PersistentVolumeClaim"
        && !min.contains_key("storage")
        && !max.contains_key("storage")
    {
        errs.required(
            path.child("limits"),
            "either minimum or maximum storage value is required, but neither was provided",
        );
    }
    let ratios = list(&item.max_limit_request_ratio);
    names("maxLimitRequestRatio", &ratios, errs);
    let all: BTreeSet<&String> = [&max, &min, &default, &default_request, &ratios]
        .into_iter()
        .flat_map(BTreeMap::keys)
        .collect();
    for name in all {
        let bounds = Resource {
            min: min.get(name),
            max: max.get(name),
            default: default.get(name),
            default_request: default_request.get(name),
            ratio: ratios.get(name),
        };
        bounds.check(name, path, errs);
    }
}

/// The bounds an entry sets for one resource.
struct Resource<'a> {
    min: Option<&'a Quantity>,
    max: Option<&'a Quantity>,
    default: Option<&'a Quantity>,
    default_request: Option<&'a Quantity>,
    ratio: Option<&'a Quantity>,
}

/// `a > b` as Go's `Quantity.Cmp` orders them.
fn greater(a: &Quantity, b: &Quantity) -> bool {
    match (nano_value(&a.0), nano_value(&b.0)) {
        (Some(a), Some(b)) => a > b,
        _ => false,
    }
}

impl Resource<'_> {
    fn check(&self, name: &str, path: &FieldPath, errs: &mut FieldErrors) {
        let at = |field: &str| path.child(field).key(name);
        let mut report = |field: &str, shown: &Quantity, detail: String| {
            errs.invalid(at(field), GoQuantity(shown), &detail);
        };
        if let (Some(min), Some(max)) = (self.min, self.max)
            && greater(min, max)
        {
            let detail = format!("min value {} is greater than max value {}", min.0, max.0);
            report("min", min, detail);
        }
        if let Some(request) = self.default_request {
            if let Some(min) = self.min.filter(|min| greater(min, request)) {
                let detail = format!(
                    "min value {} is greater than default request value {}",
                    min.0, request.0
                );
                report("defaultRequest", request, detail);
            }
            if let Some(max) = self.max.filter(|max| greater(request, max)) {
                let detail = format!(
                    "default request value {} is greater than max value {}",
                    request.0, max.0
                );
                report("defaultRequest", request, detail);
            }
            if let Some(default) = self.default.filter(|d| greater(request, d)) {
                let detail = format!(
                    "default request value {} is greater than default limit value {}",
                    request.0, default.0
                );
                report("defaultRequest", request, detail);
            }
        }
        if let Some(default) = self.default {
            if let Some(min) = self.min.filter(|min| greater(min, default)) {
                let detail = format!(
                    "min value {} is greater than default value {}",
                    min.0, default.0
                );
                report("default", min, detail);
            }
            if let Some(max) = self.max.filter(|max| greater(default, max)) {
                let detail = format!(
                    "default value {} is greater than max value {}",
                    default.0, max.0
                );
                report("default", max, detail);
            }
        }
        if let Some(ratio) = self.ratio {
            self.check_ratio(ratio, &mut report);
        }
        if let (Some(default), Some(request)) = (self.default, self.default_request)
            && !overcommit_allowed(name)
            && nano_value(&default.0) != nano_value(&request.0)
        {
            let detail = format!(
                "default value {} must equal to defaultRequest value {} in {name}",
                default.0, request.0
            );
            report("defaultRequest", request, detail);
        }
    }

    /// The ratio is at least 1 and at most max/min (printed as Go's `%f`).
    fn check_ratio(&self, ratio: &Quantity, report: &mut impl FnMut(&str, &Quantity, String)) {
        let nanos = |q: &Quantity| nano_value(&q.0).unwrap_or(0);
        if nanos(ratio) < 1_000_000_000 {
            let detail = format!("ratio {} is less than 1", ratio.0);
            report("maxLimitRequestRatio", ratio, detail);
        }
        let (Some(min), Some(max)) = (self.min, self.max) else {
            return;
        };
        // Upstream compares thousandths (whole units for huge values).
        let milli = |q: &Quantity| {
            let n = nanos(q);
            (n / 1_000_000 + i128::from(n % 1_000_000 > 0)) as f64
        };
        let limit = milli(max) / milli(min);
        if milli(ratio) / 1000.0 > limit {
            let detail = format!("ratio {} is greater than max/min = {limit:.6}", ratio.0);
            report("maxLimitRequestRatio", ratio, detail);
        }
    }
}
