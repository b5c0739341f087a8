//! What admission webhooks and policies share to decide whether a request
//! is theirs: upstream's rules matcher and its namespace and object
//! selectors (k8s.io/apiserver's `pkg/admission/plugin/webhook/predicates`).

use kapi_api_types::admissionregistration::v1::rule::RuleWithOperations;
use kapi_api_types::core::v1::Namespace;
use kapi_runtime::scheme::KindEntry;
use serde_json::Value;

use crate::admission::{Operation, Request};
use crate::api_error::{ApiError, ApiResult};
use crate::loopback::{self, Loopback};
use crate::selectors::label::LabelSelector;

/// The operation's wire name.
pub fn operation(operation: Operation) -> &'static str {
    match operation {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
    }
}

/// Whether `request` writes the Namespace resource itself.
pub fn is_namespace(request: &Request<'_>) -> bool {
    let info = request.attrs.scope.info();
    info.group.is_empty() && info.plural == "namespaces"
}

/// The namespace a request is in for admission: a Namespace's own name for
/// the Namespace resource (`name`), else the request's.
pub fn namespace_of<'a>(request: &'a Request<'_>, name: &'a str) -> &'a str {
    if is_namespace(request) {
        name
    } else {
        request.attrs.namespace.as_deref().unwrap_or_default()
    }
}

/// Whether a rule selects the request (upstream's rules matcher):
/// operations, groups, versions, resources with subresources (`*`, `*/*`,
/// `pods/*`, `*/scale`), scope.
pub fn rule_matches(rule: &RuleWithOperations, request: &Request<'_>) -> bool {
    rule_matches_at(rule, request, request.attrs.scope.served.info)
}

/// Where a webhook is invoked for a request: in the request's own version
/// (`Some(None)`) when one of its rules selects that, else, under
/// `matchPolicy: Equivalent`, in the first equivalent resource one selects
/// (another served version, or the same objects in another group:
/// `Some(Some(entry))`); `None` when none does.
pub fn invocation(
    rules: &[RuleWithOperations],
    request: &Request<'_>,
    equivalent: bool,
    objects: &dyn Loopback,
) -> Option<Option<KindEntry>> {
    if rules.iter().any(|rule| rule_matches(rule, request)) {
        return Some(None);
    }
    if !equivalent {
        return None;
    }
    let served = request.attrs.scope.served.info;
    let equivalents = objects.equivalents_of(request.attrs.scope.entry.info);
    for rule in rules {
        for entry in &equivalents {
            if !same_resource(entry.info, served) && rule_matches_at(rule, request, entry.info) {
                return Some(Some(entry.clone()));
            }
        }
    }
    None
}

/// Whether two resource facts name one group, version and resource.
pub fn same_resource(a: &kapi_runtime::ResourceInfo, b: &kapi_runtime::ResourceInfo) -> bool {
    (a.group, a.version, a.plural) == (b.group, b.version, b.plural)
}

/// Whether a rule selects the request as a request for `info`'s version.
pub fn rule_matches_at(
    rule: &RuleWithOperations,
    request: &Request<'_>,
    info: &kapi_runtime::ResourceInfo,
) -> bool {
    let listed = |list: &Option<Vec<String>>, value: &str| {
        list.iter().flatten().any(|v| v == "*" || v == value)
    };
    if !listed(&rule.operations, operation(request.operation))
        || !listed(&rule.api_groups, info.group)
        || !listed(&rule.api_versions, info.version)
    {
        return false;
    }
    let subresource = request.subresource();
    let resource_listed = rule.resources.iter().flatten().any(|entry| {
        let (resource, sub) = entry.split_once('/').unwrap_or((entry, ""));
        (resource == "*" || resource == info.plural) && (sub == "*" || sub == subresource)
    });
    if !resource_listed {
        return false;
    }
    let namespaces = info.group.is_empty() && info.version == "v1" && info.plural == "namespaces";
    let namespaced = request
        .attrs
        .namespace
        .as_deref()
        .is_some_and(|n| !n.is_empty());
    match rule.scope.as_deref() {
        Some("Namespaced") => !namespaces && namespaced,
        Some("Cluster") => namespaces || !namespaced,
        _ => true,
    }
}

fn labels_of(object: &Value) -> Option<std::collections::BTreeMap<String, String>> {
    object
        .pointer("/metadata/labels")
        .and_then(|l| serde_json::from_value(l.clone()).ok())
}

/// Whether the request's namespace has the labels `selector` selects: a
/// cluster-scoped object always does; a Namespace is judged by its own
/// labels; another namespace is read (404 when it does not exist).
pub async fn namespace_matches(
    selector: &LabelSelector,
    request: &Request<'_>,
    name: &str,
    object: Option<&Value>,
    old: Option<&Value>,
    objects: &dyn Loopback,
) -> ApiResult<bool> {
    if selector.is_everything() {
        return Ok(true);
    }
    let is_namespace = is_namespace(request);
    let namespace = namespace_of(request, name);
    if namespace.is_empty() && !is_namespace {
        return Ok(true);
    }
    if is_namespace && request.operation != Operation::Delete {
        return Ok(selector.matches(object.and_then(labels_of).as_ref()));
    }
    if is_namespace && let Some(old) = old {
        return Ok(selector.matches(labels_of(old).as_ref()));
    }
    match loopback::labels::<Namespace>(objects, None, namespace).await? {
        Some(labels) => Ok(selector.matches(Some(&labels))),
        None => Err(ApiError::not_found(crate::api_error::Target {
            group: "",
            resource: "namespaces",
            name: namespace,
        })),
    }
}

/// Whether the new or the old object has the labels `selector` selects
/// (an object without metadata never does).
pub fn object_matches(
    selector: &LabelSelector,
    object: Option<&Value>,
    old: Option<&Value>,
) -> bool {
    if selector.is_everything() {
        return true;
    }
    let matches = |o: Option<&Value>| {
        o.filter(|o| o.get("metadata").is_some())
            .is_some_and(|o| selector.matches(labels_of(o).as_ref()))
    };
    matches(object) || matches(old)
}
