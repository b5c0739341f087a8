//! LimitRanger (plugin/pkg/admission/limitranger): the LimitRanges of a
//! namespace default the requests and limits of a new pod's containers
//! (recorded in the `kubernetes.io/limit-ranger` annotation), then bound
//! them per container and per pod (minimum, maximum, limit-to-request
//! ratio), and bound the storage a claim requests.

use std::collections::BTreeMap;

use kapi_api_types::core::v1::{LimitRange, PersistentVolumeClaim, Pod};
use kapi_runtime::Quantity;
use kapi_runtime::quantity::{canonical, nano_value};
use serde_json::Value;

use crate::admission::{Attributes, Operation, Plugin, Request, Subject, View};
use crate::api_error::{ApiError, ApiResult};
use crate::loopback::Loopback;
use async_trait::async_trait;

const LIMIT_RANGES: (&str, &str, &str) = ("", "v1", "limitranges");

/// A resource list (`requests`, `limits`, a range's `default`...).
type Resources = BTreeMap<String, Quantity>;

/// The annotation listing what the plugin set.
const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// The LimitRanges of the namespace written to.
pub async fn limit_ranges(objects: &dyn Loopback, attrs: &Attributes<'_>) -> ApiResult<Vec<Value>> {
    match attrs.namespace.as_deref() {
        Some(ns) => objects.read_all(LIMIT_RANGES, Some(ns)).await,
        None => Ok(Vec::new()),
    }
}

/// Defaults the resources of a pod being created from each LimitRange.
pub fn admit_pod(ranges: &[LimitRange], pod: &mut Pod) {
    for range in ranges {
        let (requests, limits) = container_defaults(range);
        let mut set = Vec::new();
        let spec = &mut pod.spec;
        let lists = [
            (spec.containers.as_mut_slice(), "container"),
            (
                spec.init_containers.as_deref_mut().unwrap_or_default(),
                "init container",
            ),
        ];
        for (containers, what) in lists {
            for container in containers {
                let name = &container.name;
                let resources = &mut container.resources;
                let set_requests = fill(&mut resources.requests, &requests);
                let set_limits = fill(&mut resources.limits, &limits);
                if !set_requests.is_empty() {
                    set.push(format!(
                        "{} request for {what} {name}",
                        set_requests.join(", ")
                    ));
                }
                if !set_limits.is_empty() {
                    set.push(format!("{} limit for {what} {name}", set_limits.join(", ")));
                }
            }
        }
        if !set.is_empty() {
            let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
            annotations.insert(
                ANNOTATION.to_owned(),
                format!("LimitRanger plugin set: {}", set.join("; ")),
            );
        }
    }
}

/// The default requests and limits of containers a LimitRange gives.
fn container_defaults(range: &LimitRange) -> (Resources, Resources) {
    let (mut requests, mut limits) = (Resources::new(), Resources::new());
    let items = range.spec.limits.iter();
    for item in items.filter(|item| item.type_ == "Container") {
        if let Some(given) = &item.default_request {
            requests.extend(given.clone());
        }
        if let Some(given) = &item.default {
            limits.extend(given.clone());
        }
    }
    (requests, limits)
}

/// Adds the defaults a resource list lacks; the names added, sorted.
fn fill(list: &mut Option<Resources>, defaults: &Resources) -> Vec<String> {
    if defaults.is_empty() {
        return Vec::new();
    }
    let list = list.get_or_insert_with(Resources::new);
    let mut added = Vec::new();
    for (name, value) in defaults {
        if !list.contains_key(name) {
            list.insert(name.clone(), value.clone());
            added.push(name.clone());
        }
    }
    added.sort();
    added
}

fn items(range: &Value) -> impl Iterator<Item = &Value> {
    range["spec"]["limits"].as_array().into_iter().flatten()
}

/// Checks a pod or claim against the LimitRanges of its namespace.
pub fn check(attrs: &Attributes<'_>, ranges: &[Value], object: &Value) -> ApiResult<()> {
    let is_pod = attrs.scope.info().plural == "pods";
    let mut errors: Vec<String> = Vec::new();
    for range in ranges {
        for item in items(range) {
            let kind = item["type"].as_str().unwrap_or_default();
            match kind {
                "Container" if is_pod => {
                    let containers = ["containers", "initContainers"]
                        .into_iter()
                        .flat_map(|list| object["spec"][list].as_array().into_iter().flatten());
                    for container in containers {
                        let resources = &container["resources"];
                        let usage = Usage::of(&resources["requests"], &resources["limits"]);
                        usage.check(kind, item, &mut errors);
                    }
                }
                "Pod" if is_pod => Usage::of_pod(&object["spec"]).check(kind, item, &mut errors),
                "PersistentVolumeClaim" if !is_pod => {
                    let usage = Usage::of(&object["spec"]["resources"]["requests"], &Value::Null);
                    usage.check_claim(kind, item, &mut errors);
                }
                _ => {}
            }
        }
    }
    // Go's aggregate error: one message as it is, several in brackets, each once.
    let mut seen = Vec::new();
    errors.retain(|e| {
        let first = !seen.contains(e);
        seen.push(e.clone());
        first
    });
    match errors.len() {
        0 => Ok(()),
        1 => Err(attrs.forbidden(&errors[0])),
        _ => Err(attrs.forbidden(&format!("[{}]", errors.join(", ")))),
    }
}

/// A quantity as its text and its value in thousandths (rounded up, as Go's
/// `MilliValue`).
#[derive(Clone, Debug)]
pub(super) struct Amount {
    pub(super) text: String,
    pub(super) milli: i128,
}

impl Amount {
    pub(super) fn parse(value: &Value) -> Option<Amount> {
        let text = value.as_str()?;
        let nano = nano_value(text)?;
        Some(Amount {
            text: canonical(text).unwrap_or_else(|| text.to_owned()),
            milli: nano.div_euclid(1_000_000) + i128::from(nano.rem_euclid(1_000_000) != 0),
        })
    }

    /// The sum or maximum of amounts, written as Go writes the result (in
    /// the first amount's family of suffixes).
    pub(super) fn from_milli(milli: i128, binary: bool) -> Amount {
        let text = if binary && milli % 1_024_000 == 0 {
            canonical(&format!("{}Ki", milli / 1_024_000))
        } else if milli % 1000 == 0 {
            canonical(&(milli / 1000).to_string())
        } else {
            canonical(&format!("{milli}m"))
        };
        Amount {
            text: text.unwrap_or_default(),
            milli,
        }
    }
}

/// The requests and limits of a container or pod.
pub(super) struct Usage {
    pub(super) requests: BTreeMap<String, Amount>,
    pub(super) limits: BTreeMap<String, Amount>,
}

fn amounts(list: &Value) -> BTreeMap<String, Amount> {
    list.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| Some((name.clone(), Amount::parse(value)?)))
        .collect()
}

impl Usage {
    fn of(requests: &Value, limits: &Value) -> Usage {
        Usage {
            requests: amounts(requests),
            limits: amounts(limits),
        }
    }

    /// A pod's usage: its containers and sidecars add up; an init container
    /// that runs alone counts when it needs more.
    pub(super) fn of_pod(spec: &Value) -> Usage {
        let list = |key: &str| -> Vec<Value> { spec[key].as_array().cloned().unwrap_or_default() };
        let total = |which: &str| {
            let mut sum: BTreeMap<String, (i128, bool)> = BTreeMap::new();
            for container in list("containers") {
                add(&mut sum, &amounts(&container["resources"][which]));
            }
            let mut sidecars = BTreeMap::new();
            let mut init_peak = BTreeMap::new();
            for container in list("initContainers") {
                let own = amounts(&container["resources"][which]);
                let needs = if container["restartPolicy"] == "Always" {
                    add(&mut sum, &own);
                    add(&mut sidecars, &own);
                    sidecars.clone()
                } else {
                    let mut needs = BTreeMap::new();
                    add(&mut needs, &own);
                    for (name, (milli, binary)) in &sidecars {
                        let entry = needs.entry(name.clone()).or_insert((0, *binary));
                        entry.0 += milli;
                    }
                    needs
                };
                for (name, (milli, binary)) in needs {
                    let entry = init_peak.entry(name).or_insert((milli, binary));
                    entry.0 = entry.0.max(milli);
                }
            }
            for (name, (milli, binary)) in init_peak {
                let entry = sum.entry(name).or_insert((milli, binary));
                entry.0 = entry.0.max(milli);
            }
            sum.into_iter()
                .map(|(name, (milli, binary))| (name, Amount::from_milli(milli, binary)))
                .collect()
        };
        Usage {
            requests: total("requests"),
            limits: total("limits"),
        }
    }

    /// The container or pod checks of one LimitRange item.
    fn check(&self, kind: &str, item: &Value, errors: &mut Vec<String>) {
        for (name, min) in amounts(&item["min"]) {
            match (self.requests.get(&name), self.limits.get(&name)) {
                (None, _) => errors.push(format!(
                    "minimum {name} usage per {kind} is {}.  No request is specified",
                    min.text
                )),
                (Some(request), _) if request.milli < min.milli => errors.push(format!(
                    "minimum {name} usage per {kind} is {}, but request is {}",
                    min.text, request.text
                )),
                (_, Some(limit)) if limit.milli < min.milli => errors.push(format!(
                    "minimum {name} usage per {kind} is {}, but limit is {}",
                    min.text, limit.text
                )),
                _ => {}
            }
        }
        for (name, max) in amounts(&item["max"]) {
            match (self.requests.get(&name), self.limits.get(&name)) {
                (_, None) => errors.push(format!(
                    "maximum {name} usage per {kind} is {}.  No limit is specified",
                    max.text
                )),
                (_, Some(limit)) if limit.milli > max.milli => errors.push(format!(
                    "maximum {name} usage per {kind} is {}, but limit is {}",
                    max.text, limit.text
                )),
                (Some(request), _) if request.milli > max.milli => errors.push(format!(
                    "maximum {name} usage per {kind} is {}, but request is {}",
                    max.text, request.text
                )),
                _ => {}
            }
        }
        for (name, ratio) in amounts(&item["maxLimitRequestRatio"]) {
            let request = self.requests.get(&name).filter(|r| r.milli != 0);
            let limit = self.limits.get(&name).filter(|l| l.milli != 0);
            match (request, limit) {
                (None, _) => errors.push(format!(
                    "{name} max limit to request ratio per {kind} is {}, but no request is specified or request is 0",
                    ratio.text
                )),
                (_, None) => errors.push(format!(
                    "{name} max limit to request ratio per {kind} is {}, but no limit is specified or limit is 0",
                    ratio.text
                )),
                (Some(request), Some(limit)) => {
                    let observed = limit.milli as f64 / request.milli as f64;
                    if observed * 1000.0 > ratio.milli as f64 {
                        errors.push(format!(
                            "{name} max limit to request ratio per {kind} is {}, but provided ratio is {observed:.6}",
                            ratio.text
                        ));
                    }
                }
            }
        }
    }

    /// The claim checks of one LimitRange item: its requests against the
    /// minimum and maximum.
    fn check_claim(&self, kind: &str, item: &Value, errors: &mut Vec<String>) {
        for (name, min) in amounts(&item["min"]) {
            match self.requests.get(&name) {
                None => errors.push(format!(
                    "minimum {name} usage per {kind} is {}.  No request is specified",
                    min.text
                )),
                Some(request) if request.milli < min.milli => errors.push(format!(
                    "minimum {name} usage per {kind} is {}, but request is {}",
                    min.text, request.text
                )),
                _ => {}
            }
        }
        for (name, max) in amounts(&item["max"]) {
            match self.requests.get(&name) {
                None => errors.push(format!(
                    "maximum {name} usage per {kind} is {}.  No request is specified",
                    max.text
                )),
                Some(request) if request.milli > max.milli => errors.push(format!(
                    "maximum {name} usage per {kind} is {}, but request is {}",
                    max.text, request.text
                )),
                _ => {}
            }
        }
    }
}

/// Adds amounts to a running total (thousandths, and whether the first
/// amount of each resource was binary).
fn add(total: &mut BTreeMap<String, (i128, bool)>, amounts: &BTreeMap<String, Amount>) {
    for (name, amount) in amounts {
        let binary = amount.text.ends_with('i');
        let entry = total.entry(name.clone()).or_insert((0, binary));
        entry.0 += amount.milli;
    }
}

/// LimitRanger: pods and claims get the defaults of their namespace's
/// ranges, and are refused outside them.
pub struct LimitRanger;

#[async_trait]
impl Plugin for LimitRanger {
    fn name(&self) -> &'static str {
        "LimitRanger"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Create && request.is_kind::<Pod>()
    }

    fn validates(&self, request: &Request<'_>) -> bool {
        let claims = request.is_kind::<PersistentVolumeClaim>();
        match request.operation {
            Operation::Create => request.is_kind::<Pod>() || claims,
            Operation::Update => request.main_update() && claims,
            Operation::Delete => false,
        }
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        // No range, nothing to default: the pod is not even looked at.
        let ranges = limit_ranges(objects, &request.attrs).await?;
        if ranges.is_empty() {
            return Ok(());
        }
        let Some(pod) = object.downcast_mut::<Pod>()? else {
            return Ok(());
        };
        let ranges = ranges
            .into_iter()
            .map(serde_json::from_value)
            .collect::<Result<Vec<LimitRange>, _>>()
            .map_err(ApiError::internal)?;
        admit_pod(&ranges, pod);
        Ok(())
    }

    async fn validate(
        &self,
        request: &Request<'_>,
        object: &View<'_>,
        old: Option<&View<'_>>,
        objects: &dyn Loopback,
        _warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        // Objects being deleted are left alone (a range made since must not
        // keep a claim from losing its finalizers).
        if old.is_some_and(|old| old.object().metadata().deletion_timestamp.is_some()) {
            return Ok(());
        }
        let ranges = limit_ranges(objects, &request.attrs).await?;
        if ranges.is_empty() {
            return Ok(());
        }
        check(&request.attrs, &ranges, object.json()?)
    }
}
