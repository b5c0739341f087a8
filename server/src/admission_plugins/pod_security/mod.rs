//! PodSecurity (k8s.io/pod-security-admission): the Pod Security Standards a
//! namespace opts into by label. `pod-security.kubernetes.io/enforce` refuses
//! a pod that violates its level, `.../warn` answers `Warning` headers (the
//! `audit` mode writes audit annotations, which kapi does not keep). A
//! `-version` label names the standard's version in the messages; the checks
//! are those of the latest version.

mod baseline;
mod checks;
mod restricted;

use std::collections::BTreeMap;

use kapi_api_types::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use kapi_api_types::batch::v1::{CronJob, Job};
use kapi_api_types::core::v1::pod::container::Container;
use kapi_api_types::core::v1::pod::spec::PodTemplateSpec;
use kapi_api_types::core::v1::{Namespace, Pod, PodTemplate, ReplicationController};

use kapi_runtime::validation::{FieldErrors, FieldPath};

use crate::admission::{Attributes, Operation, Plugin, Request, View};
use crate::api_error::{ApiError, ApiResult};
use crate::body::Object;
use crate::loopback::{self, Loopback};
use crate::scope::Endpoint;
use async_trait::async_trait;
pub use checks::PodShape;

const LABEL_PREFIX: &str = "pod-security.kubernetes.io/";

/// A namespace's labels (none: no labels).
type Labels = Option<BTreeMap<String, String>>;

/// The levels of the Pod Security Standards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    fn parse(text: &str) -> Option<Level> {
        match text {
            "privileged" => Some(Level::Privileged),
            "baseline" => Some(Level::Baseline),
            "restricted" => Some(Level::Restricted),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// A namespace's level and version for one mode (`enforce`, `warn`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Policy {
    level: Level,
    version: String,
}

impl Policy {
    /// The policy the namespace's labels set for `mode`: privileged unless
    /// they name a level.
    fn of(labels: &Labels, mode: &str) -> Policy {
        let label = |key: String| {
            labels
                .as_ref()
                .and_then(|l| l.get(&key))
                .map(String::as_str)
        };
        let level = label(format!("{LABEL_PREFIX}{mode}"))
            .and_then(Level::parse)
            .unwrap_or(Level::Privileged);
        let version = label(format!("{LABEL_PREFIX}{mode}-version"))
            .filter(|v| *v == "latest" || is_version(v))
            .unwrap_or("latest")
            .to_owned();
        Policy { level, version }
    }

    /// The violations of `pod`, as `reason (detail)` texts.
    fn violations(&self, pod: PodShape<'_>) -> Vec<String> {
        if self.level == Level::Privileged {
            return Vec::new();
        }
        checks::evaluate(self.level == Level::Restricted, pod)
            .into_iter()
            .map(|(reason, detail)| format!("{reason} ({detail})"))
            .collect()
    }

    fn label(&self) -> String {
        format!("{}:{}", self.level.name(), self.version)
    }
}

/// `v1.<minor>`.
fn is_version(text: &str) -> bool {
    text.strip_prefix("v1.")
        .is_some_and(|minor| !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit()))
}

/// The labels of the namespace the request writes in (its Pod Security
/// levels).
pub(super) async fn namespace_labels(
    objects: &dyn Loopback,
    attrs: &Attributes<'_>,
) -> ApiResult<Labels> {
    let Some(ns) = attrs.namespace.as_deref() else {
        return Ok(None);
    };
    let namespace = loopback::get::<Namespace>(objects, None, ns).await?;
    Ok(namespace.and_then(|ns| ns.metadata.labels))
}

/// Whether the request writes a kind that makes pods from a template.
fn makes_pods(request: &Request<'_>) -> bool {
    request.is_kind::<Deployment>()
        || request.is_kind::<ReplicaSet>()
        || request.is_kind::<StatefulSet>()
        || request.is_kind::<DaemonSet>()
        || request.is_kind::<Job>()
        || request.is_kind::<CronJob>()
        || request.is_kind::<ReplicationController>()
        || request.is_kind::<PodTemplate>()
}

/// The pod template of a kind that makes pods (`None` for other kinds, and
/// for a ReplicationController without one).
pub fn pod_template(object: &Object) -> Option<PodShape<'_>> {
    let template: &PodTemplateSpec = if let Some(d) = object.downcast_ref::<Deployment>() {
        &d.spec.template
    } else if let Some(r) = object.downcast_ref::<ReplicaSet>() {
        &r.spec.template
    } else if let Some(s) = object.downcast_ref::<StatefulSet>() {
        &s.spec.template
    } else if let Some(d) = object.downcast_ref::<DaemonSet>() {
        &d.spec.template
    } else if let Some(j) = object.downcast_ref::<Job>() {
        &j.spec.template
    } else if let Some(c) = object.downcast_ref::<CronJob>() {
        &c.spec.job_template.spec.template
    } else if let Some(r) = object.downcast_ref::<ReplicationController>() {
        r.spec.template.as_ref()?
    } else {
        &object.downcast_ref::<PodTemplate>()?.template
    };
    Some(PodShape {
        metadata: &template.metadata,
        spec: &template.spec,
    })
}

/// A pod as the standards look at it.
pub fn pod_shape(pod: &Pod) -> PodShape<'_> {
    PodShape {
        metadata: &pod.metadata,
        spec: &pod.spec,
    }
}

/// Whether the levels the namespace's `labels` set check pods at all: a
/// namespace that enforces and warns of nothing (privileged) lets every pod
/// through unlooked at.
fn checks_pods(labels: &Labels) -> bool {
    ["enforce", "warn"]
        .iter()
        .any(|mode| Policy::of(labels, mode).level != Level::Privileged)
}

/// Checks the pod template of a workload being created: violations of the
/// enforced level and of the warned one are warnings (the workload's pods
/// are refused, not the workload).
fn template_warnings(labels: &Labels, pod: PodShape<'_>, warnings: &mut Vec<String>) {
    let enforce = Policy::of(labels, "enforce");
    let warn = Policy::of(labels, "warn");
    let mut policies = vec![enforce.clone()];
    if warn != enforce {
        policies.push(warn);
    }
    for policy in policies {
        let violations = policy.violations(pod);
        if !violations.is_empty() {
            warnings.push(format!(
                "would violate PodSecurity {:?}: {}",
                policy.label(),
                violations.join(", ")
            ));
        }
    }
}

/// Checks a pod against the levels its namespace's `labels` set.
pub fn check_pod(
    attrs: &Attributes<'_>,
    labels: &Labels,
    pod: PodShape<'_>,
    warnings: &mut Vec<String>,
) -> ApiResult<()> {
    let enforce = Policy::of(labels, "enforce");
    let violations = enforce.violations(pod);
    if !violations.is_empty() {
        return Err(attrs.forbidden(&format!(
            "violates PodSecurity {:?}: {}",
            enforce.label(),
            violations.join(", ")
        )));
    }
    let warn = Policy::of(labels, "warn");
    let violations = warn.violations(pod);
    if !violations.is_empty() {
        warnings.push(format!(
            "would violate PodSecurity {:?}: {}",
            warn.label(),
            violations.join(", ")
        ));
    }
    Ok(())
}

/// Whether pod updates through `endpoint` are checked: the pod itself and
/// its ephemeral containers (status, binding and the like are not).
pub fn checks_update(endpoint: Endpoint) -> bool {
    match endpoint {
        Endpoint::Main => true,
        Endpoint::Part(part) => part.name == "ephemeralcontainers",
        Endpoint::Status => false,
    }
}

/// Whether a pod update may change what the standards check: containers
/// added or removed, an image or a seccomp annotation changed. Other pod
/// updates (labels, tolerations...) are not checked again.
pub fn significant_update(old: &Pod, new: &Pod) -> bool {
    const SECCOMP: &str = "seccomp.security.alpha.kubernetes.io/pod";
    let annotation = |pod: &Pod, key: &str| {
        let annotations = pod.metadata.annotations.as_ref();
        annotations.and_then(|a| a.get(key)).cloned()
    };
    if annotation(old, SECCOMP) != annotation(new, SECCOMP) {
        return true;
    }
    let (old_lists, new_lists) = (container_images(old), container_images(new));
    old_lists
        .iter()
        .zip(&new_lists)
        .any(|(old_items, new_items)| {
            old_items.len() != new_items.len()
                || old_items.iter().zip(new_items).any(|((_, o), (name, n))| {
                    let key = format!("container.seccomp.security.alpha.kubernetes.io/{name}");
                    o != n || annotation(old, &key) != annotation(new, &key)
                })
        })
}

/// The name and image of each container, init container and ephemeral
/// container of a pod.
fn container_images(pod: &Pod) -> [Vec<(&str, Option<&str>)>; 3] {
    let spec = &pod.spec;
    let init = spec.init_containers.as_deref().unwrap_or_default();
    let ephemeral = spec.ephemeral_containers.iter().flatten();
    [
        spec.containers.iter().map(name_and_image).collect(),
        init.iter().map(name_and_image).collect(),
        ephemeral
            .map(|c| (c.name.as_str(), image(&c.image)))
            .collect(),
    ]
}

fn name_and_image(container: &Container) -> (&str, Option<&str>) {
    (container.name.as_str(), image(&container.image))
}

/// A container's image; an empty one is none, as in the pod's JSON.
fn image(image: &Option<String>) -> Option<&str> {
    image.as_deref().filter(|i| !i.is_empty())
}

/// The modes a namespace may label, in the order upstream checks them.
const MODES: [&str; 3] = ["enforce", "audit", "warn"];

/// Refuses a namespace whose Pod Security labels name no level or version.
pub fn validate_namespace(namespace: &Namespace) -> ApiResult<()> {
    let labels = namespace.metadata.labels.as_ref();
    let label = |key: &str| labels.and_then(|l| l.get(key)).map(String::as_str);
    let mut errors = FieldErrors::default();
    let path = FieldPath::new("metadata").child("labels");
    for mode in MODES {
        let key = format!("{LABEL_PREFIX}{mode}");
        if let Some(level) = label(&key).filter(|l| Level::parse(l).is_none()) {
            errors.invalid(
                path.key(&key),
                level,
                "must be one of privileged, baseline, restricted",
            );
        }
        let key = format!("{key}-version");
        if let Some(version) = label(&key).filter(|v| *v != "latest" && !is_version(v)) {
            errors.invalid(path.key(&key), version, "must be \"latest\" or \"v1.x\"");
        }
    }
    if errors.is_empty() {
        return Ok(());
    }
    let name = namespace.metadata.name.as_deref().unwrap_or_default();
    Err(ApiError::invalid("", "Namespace", name, &errors))
}

/// The warnings of a namespace update that makes its enforced level
/// stricter than some of its pods: one line, then one per distinct set of
/// violations, naming the first pod by name and counting the others.
/// The namespace's pods are read only when its enforced level changes.
pub async fn existing_pod_warnings(
    objects: &dyn Loopback,
    old: &Namespace,
    new: &Namespace,
) -> ApiResult<Vec<String>> {
    let new_policy = Policy::of(&new.metadata.labels, "enforce");
    let old_policy = Policy::of(&old.metadata.labels, "enforce");
    if new_policy == old_policy || new_policy.level == Level::Privileged {
        return Ok(Vec::new());
    }
    let ns = new.metadata.name.as_deref().unwrap_or_default();
    let pods = loopback::list::<Pod>(objects, Some(ns)).await?;
    Ok(pod_warnings(ns, &new_policy, &pods))
}

/// What [`existing_pod_warnings`] says about `pods` under `new_policy`.
fn pod_warnings(ns: &str, new_policy: &Policy, pods: &[Pod]) -> Vec<String> {
    // (violations, first pod by name, pods)
    let mut groups: Vec<(String, String, usize)> = Vec::new();
    for pod in prioritized(pods) {
        let reasons: Vec<String> =
            checks::evaluate(new_policy.level == Level::Restricted, pod_shape(pod))
                .into_iter()
                .map(|(reason, _)| reason)
                .collect();
        if reasons.is_empty() {
            continue;
        }
        let reasons = reasons.join(", ");
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        match groups.iter_mut().find(|(r, ..)| *r == reasons) {
            Some((_, first, count)) => {
                if name < first.as_str() {
                    *first = name.to_owned();
                }
                *count += 1;
            }
            None => groups.push((reasons, name.to_owned(), 1)),
        }
    }
    if groups.is_empty() {
        return Vec::new();
    }
    let mut warnings = vec![format!(
        "existing pods in namespace {ns:?} violate the new PodSecurity enforce level {:?}",
        new_policy.label()
    )];
    for (reasons, first, count) in groups {
        warnings.push(match count {
            1 => format!("{first}: {reasons}"),
            2 => format!("{first} (and 1 other pod): {reasons}"),
            _ => format!("{first} (and {} other pods): {reasons}", count - 1),
        });
    }
    warnings
}

/// Pods in upstream's order of evaluation: one per controller first, the
/// other replicas after.
fn prioritized(pods: &[Pod]) -> Vec<&Pod> {
    let mut first = Vec::new();
    let mut replicas = Vec::new();
    let mut controllers: Vec<&str> = Vec::new();
    for pod in pods {
        let controller = pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|owner| owner.controller == Some(true))
            .map(|owner| owner.uid.as_str());
        match controller {
            Some(uid) if controllers.contains(&uid) => replicas.push(pod),
            Some(uid) => {
                controllers.push(uid);
                first.push(pod);
            }
            None => first.push(pod),
        }
    }
    first.extend(replicas);
    first
}

/// PodSecurity: pods (and pod templates, with warnings only) against their
/// namespace's levels; a namespace's level labels.
pub struct PodSecurity;

#[async_trait]
impl Plugin for PodSecurity {
    fn name(&self) -> &'static str {
        "PodSecurity"
    }

    fn validates(&self, request: &Request<'_>) -> bool {
        match request.operation {
            Operation::Create => {
                request.is_kind::<Pod>() || request.is_kind::<Namespace>() || makes_pods(request)
            }
            Operation::Update => {
                (request.is_kind::<Pod>() && checks_update(request.endpoint))
                    || (request.is_kind::<Namespace>() && request.endpoint == Endpoint::Main)
            }
            Operation::Delete => false,
        }
    }

    async fn validate(
        &self,
        request: &Request<'_>,
        object: &View<'_>,
        old: Option<&View<'_>>,
        objects: &dyn Loopback,
        warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let attrs = &request.attrs;
        if let Some(namespace) = object.downcast_ref::<Namespace>() {
            validate_namespace(namespace)?;
            if let Some(old) = old.and_then(|old| old.downcast_ref::<Namespace>()) {
                let more = existing_pod_warnings(objects, old, namespace).await?;
                warnings.extend(more);
            }
            return Ok(());
        }
        if let Some(pod) = object.downcast_ref::<Pod>() {
            // Only updates that change what the standards look at are
            // checked again.
            if let Some(old) = old.and_then(|old| old.downcast_ref::<Pod>())
                && !significant_update(old, pod)
            {
                return Ok(());
            }
            let labels = namespace_labels(objects, attrs).await?;
            if !checks_pods(&labels) {
                return Ok(());
            }
            return check_pod(attrs, &labels, pod_shape(pod), warnings);
        }
        let Some(template) = pod_template(object.object()) else {
            return Ok(());
        };
        let labels = namespace_labels(objects, attrs).await?;
        if checks_pods(&labels) {
            template_warnings(&labels, template, warnings);
        }
        Ok(())
    }
}
