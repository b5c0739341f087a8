//! PodSecurity (k8s.io/pod-security-admission): the Pod Security Standards a
//! namespace opts into by label. `pod-security.kubernetes.io/enforce` refuses
//! a pod that violates its level, `.../warn` answers `Warning` headers (the
//! `audit` mode writes audit annotations, which kapi does not keep). A
//! `-version` label names the standard's version in the messages; the checks
//! are those of the latest version.

mod baseline;
mod checks;
mod restricted;

use serde_json::Value;

use super::Attributes;
use crate::api_error::ApiResult;
use crate::registry::Registry;

const LABEL_PREFIX: &str = "pod-security.kubernetes.io/";

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
    fn of(labels: &Value, mode: &str) -> Policy {
        let level = labels[format!("{LABEL_PREFIX}{mode}")]
            .as_str()
            .and_then(Level::parse)
            .unwrap_or(Level::Privileged);
        let version = labels[format!("{LABEL_PREFIX}{mode}-version")]
            .as_str()
            .filter(|v| *v == "latest" || is_version(v))
            .unwrap_or("latest")
            .to_owned();
        Policy { level, version }
    }

    /// The violations of `pod`, as `reason (detail)` texts.
    fn violations(&self, pod: &Value) -> Vec<String> {
        if self.level == Level::Privileged {
            return Vec::new();
        }
        checks::evaluate(self.level == Level::Restricted, pod)
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

/// The labels of the namespace written to.
async fn namespace_labels(registry: &Registry, attrs: &Attributes<'_>) -> ApiResult<Value> {
    let Some(ns) = attrs.namespace.as_deref() else {
        return Ok(Value::Null);
    };
    let namespace = registry
        .read_object(("", "v1", "namespaces"), None, ns)
        .await?;
    Ok(namespace.map_or(Value::Null, |mut ns| ns["metadata"]["labels"].take()))
}

/// Where the pod template of a kind that makes pods lies (`None` for other
/// kinds).
pub fn template_path(group: &str, plural: &str) -> Option<&'static [&'static str]> {
    match (group, plural) {
        ("apps", "deployments" | "replicasets" | "statefulsets" | "daemonsets")
        | ("batch", "jobs")
        | ("", "replicationcontrollers") => Some(&["spec", "template"]),
        ("batch", "cronjobs") => Some(&["spec", "jobTemplate", "spec", "template"]),
        ("", "podtemplates") => Some(&["template"]),
        _ => None,
    }
}

/// The pod template at `path` of a workload, as a pod's JSON (`metadata`
/// and `spec`).
pub fn pod_template(object: &Value, path: &[&str]) -> Value {
    let template = path.iter().fold(object, |value, key| &value[key]);
    serde_json::json!({ "metadata": template["metadata"], "spec": template["spec"] })
}

/// Checks the pod template of a workload being created: violations of the
/// enforced level and of the warned one are warnings (the workload's pods
/// are refused, not the workload).
pub async fn admit_template(
    registry: &Registry,
    attrs: &Attributes<'_>,
    pod: &Value,
    warnings: &mut Vec<String>,
) -> ApiResult<()> {
    let labels = namespace_labels(registry, attrs).await?;
    let enforce = Policy::of(&labels, "enforce");
    let warn = Policy::of(&labels, "warn");
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
    Ok(())
}

/// Checks a pod being created against its namespace's standards: refuses
/// it when it violates the enforced level, adds a warning when it violates
/// the warned one.
pub async fn admit_pod(
    registry: &Registry,
    attrs: &Attributes<'_>,
    pod: &Value,
    warnings: &mut Vec<String>,
) -> ApiResult<()> {
    let labels = namespace_labels(registry, attrs).await?;
    let labels = &labels;
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
