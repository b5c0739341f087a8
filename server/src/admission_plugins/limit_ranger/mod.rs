//! LimitRanger (plugin/pkg/admission/limitranger): the LimitRanges of a
//! namespace default the requests and limits of a new pod's containers
//! (recorded in the `kubernetes.io/limit-ranger` annotation), then bound
//! them per container and per pod (minimum, maximum, limit-to-request
//! ratio), and bound the storage a claim requests.

use std::collections::BTreeMap;

use kapi_api_types::core::v1::{LimitRange, PersistentVolumeClaim, Pod};
use kapi_runtime::Quantity;

mod usage;

pub(super) use usage::{Amount, Usage};

use crate::admission::{Attributes, Operation, Plugin, Request, Subject, View};
use crate::api_error::ApiResult;
use crate::loopback::{self, Loopback};
use async_trait::async_trait;

/// A resource list (`requests`, `limits`, a range's `default`...).
type Resources = BTreeMap<String, Quantity>;

/// The annotation listing what the plugin set.
const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// The LimitRanges of the namespace written to.
pub async fn limit_ranges(
    objects: &dyn Loopback,
    attrs: &Attributes<'_>,
) -> ApiResult<Vec<LimitRange>> {
    let Some(ns) = attrs.namespace.as_deref() else {
        return Ok(Vec::new());
    };
    loopback::list::<LimitRange>(objects, Some(ns)).await
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

/// What a LimitRange bounds.
#[derive(Clone, Copy)]
pub enum Bounded<'o> {
    /// A pod being created: its containers and the pod as a whole.
    Pod(&'o Pod),
    /// A claim being created or updated: the storage it requests.
    Claim(&'o PersistentVolumeClaim),
}

/// Checks a pod or claim against the LimitRanges of its namespace.
pub fn check(attrs: &Attributes<'_>, ranges: &[LimitRange], object: Bounded<'_>) -> ApiResult<()> {
    let mut errors: Vec<String> = Vec::new();
    for item in ranges.iter().flat_map(|range| &range.spec.limits) {
        let kind = item.type_.as_str();
        match (kind, object) {
            ("Container", Bounded::Pod(pod)) => {
                let spec = &pod.spec;
                let containers = spec.init_containers.iter().flatten();
                for container in spec.containers.iter().chain(containers) {
                    let resources = &container.resources;
                    let usage = Usage::of(resources.requests.as_ref(), resources.limits.as_ref());
                    usage.check(kind, item, &mut errors);
                }
            }
            ("Pod", Bounded::Pod(pod)) => Usage::of_pod(&pod.spec).check(kind, item, &mut errors),
            ("PersistentVolumeClaim", Bounded::Claim(claim)) => {
                let usage = Usage::of(claim.spec.resources.requests.as_ref(), None);
                usage.check_claim(kind, item, &mut errors);
            }
            _ => {}
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
        if let Some(pod) = object.downcast_mut::<Pod>()? {
            admit_pod(&ranges, pod);
        }
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
        let bounded = match (object.downcast_ref::<Pod>(), object.downcast_ref()) {
            (Some(pod), _) => Bounded::Pod(pod),
            (None, Some(claim)) => Bounded::Claim(claim),
            (None, None) => return Ok(()),
        };
        check(&request.attrs, &ranges, bounded)
    }
}
