//! What a request is about, read off its method, path and query the way
//! k8s.io/apiserver's RequestInfoFactory does: once, by the first filter
//! (`crate::filters`), into a [`RequestInfo`] every later filter and the
//! handler read from the request's extensions.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::Method;

use crate::api_error::ApiResult;
use crate::selectors::field::FieldSelector;

/// Longest a non-watch request may take, as kube-apiserver's `--request-timeout`
/// default: a backend that stopped answering gets a 504, never a hang.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// What a request is about, parsed once.
#[derive(Debug)]
pub struct RequestInfo {
    /// The resource addressed, for `/api/...` and `/apis/...` paths below a
    /// version; `None` for every other path.
    pub resource: Option<ResourceRequest>,
    /// The method in lower case: the verb of a request for no resource.
    pub method: Cow<'static, str>,
    /// `watch=true` (any value but `0` or `false`).
    pub watch: bool,
    /// `timeout=`: how long the client lets the request take (a Go
    /// duration; zero or negative is zero), or the 400 to answer when it
    /// does not parse. `Ok(None)` when absent or empty.
    pub timeout: ApiResult<Option<Duration>>,
    /// The query's parameters as sent, read once here for every filter and
    /// the handler (each checks the ones it uses).
    pub query: Query,
}

/// The query parameters of a request as sent: those of metav1's
/// ListOptions, GetOptions, CreateOptions, UpdateOptions, PatchOptions and
/// DeleteOptions, and `timeout`. A repeated parameter counts once, its first
/// value, as Go's `Values.Get` (and metav1's query conversion) read it;
/// unknown ones are ignored, as upstream ignores them.
#[derive(Debug, Default)]
pub struct Query {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `limit`.
    pub limit: Option<String>,
    /// `continue`.
    pub continue_token: Option<String>,
    /// `resourceVersion`.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<String>,
    /// `watch`.
    pub watch: Option<String>,
    /// `allowWatchBookmarks`.
    pub allow_watch_bookmarks: Option<String>,
    /// `sendInitialEvents`.
    pub send_initial_events: Option<String>,
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<String>,
    /// `dryRun`: every value (a list upstream, each of which must be `All`).
    pub dry_run: Vec<String>,
    /// `fieldValidation`.
    pub field_validation: Option<String>,
    /// `gracePeriodSeconds`.
    pub grace_period_seconds: Option<String>,
    /// `propagationPolicy`.
    pub propagation_policy: Option<String>,
    /// `orphanDependents`.
    pub orphan_dependents: Option<String>,
    /// `includeObject`.
    pub include_object: Option<String>,
    /// `timeout`: how long a non-watch request may take (a Go duration).
    pub timeout: Option<String>,
    /// `fieldManager`: who writes, as managedFields name it.
    pub field_manager: Option<String>,
    /// `force`: an apply takes the fields other managers own.
    pub force: Option<String>,
}

impl Query {
    /// Reads a query string in one pass.
    pub fn parse(query: Option<&str>) -> Query {
        let mut parsed = Query::default();
        for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            if key == "dryRun" {
                parsed.dry_run.push(value.into_owned());
                continue;
            }
            let slot = match &*key {
                "labelSelector" => &mut parsed.label_selector,
                "fieldSelector" => &mut parsed.field_selector,
                "limit" => &mut parsed.limit,
                "continue" => &mut parsed.continue_token,
                "resourceVersion" => &mut parsed.resource_version,
                "resourceVersionMatch" => &mut parsed.resource_version_match,
                "watch" => &mut parsed.watch,
                "allowWatchBookmarks" => &mut parsed.allow_watch_bookmarks,
                "sendInitialEvents" => &mut parsed.send_initial_events,
                "timeoutSeconds" => &mut parsed.timeout_seconds,
                "fieldValidation" => &mut parsed.field_validation,
                "gracePeriodSeconds" => &mut parsed.grace_period_seconds,
                "propagationPolicy" => &mut parsed.propagation_policy,
                "orphanDependents" => &mut parsed.orphan_dependents,
                "includeObject" => &mut parsed.include_object,
                "timeout" => &mut parsed.timeout,
                "fieldManager" => &mut parsed.field_manager,
                "force" => &mut parsed.force,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(value.into_owned());
            }
        }
        parsed
    }
}

impl RequestInfo {
    /// Parses `method`, `path` and `query`.
    pub fn parse(method: &Method, path: &str, query: Option<&str>) -> RequestInfo {
        let query = Query::parse(query);
        let watch = query
            .watch
            .as_deref()
            .is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"));
        RequestInfo {
            resource: parse(method, path, watch),
            method: lower_case(method),
            watch,
            timeout: crate::go_duration::request_timeout(query.timeout.as_deref()),
            query,
        }
    }

    /// The request's info, as the first filter put it in its extensions
    /// (parsed here for a request that did not pass the filters).
    pub fn of(request: &Request) -> Arc<RequestInfo> {
        match request.extensions().get::<Arc<RequestInfo>>() {
            Some(info) => info.clone(),
            None => Arc::new(RequestInfo::parse(
                request.method(),
                request.uri().path(),
                request.uri().query(),
            )),
        }
    }

    /// The resource addressed, borrowed.
    pub fn resource(&self) -> Option<ResourceRef<'_>> {
        self.resource.as_ref().map(ResourceRequest::as_ref)
    }

    /// The parsed field selector of a list or watch, when it has one that
    /// parses (one that does not is the list's 400 to give, not a filter's).
    pub fn list_fields(&self) -> Option<FieldSelector> {
        let listing = matches!(
            self.resource.as_ref().map(|r| r.verb),
            Some(Verb::List | Verb::Watch)
        );
        listing
            .then_some(self.query.field_selector.as_deref()?)
            .and_then(|text| FieldSelector::parse(text).ok())
    }

    /// The bound of a non-watch request: `timeout=` when it shortens the
    /// server's own [`REQUEST_TIMEOUT`] (zero, negative, longer or invalid
    /// means the server's, as upstream).
    pub fn deadline(&self) -> Duration {
        match self.timeout {
            Ok(Some(t)) if !t.is_zero() && t < REQUEST_TIMEOUT => t,
            _ => REQUEST_TIMEOUT,
        }
    }
}

/// The method as RBAC names a request for no resource: lower case.
pub fn lower_case(method: &Method) -> Cow<'static, str> {
    let known = [
        (Method::GET, "get"),
        (Method::HEAD, "head"),
        (Method::POST, "post"),
        (Method::PUT, "put"),
        (Method::PATCH, "patch"),
        (Method::DELETE, "delete"),
        (Method::OPTIONS, "options"),
    ];
    match known.into_iter().find(|(m, _)| m == method) {
        Some((_, verb)) => verb.into(),
        None => method.as_str().to_ascii_lowercase().into(),
    }
}

/// The verb of a resource request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    /// GET with a name.
    Get,
    /// GET without a name.
    List,
    /// GET without a name and `watch=true`.
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
    /// DELETE with a name.
    Delete,
    /// DELETE without a name.
    DeleteCollection,
}

impl Verb {
    /// The verb as discovery and RBAC name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }
}

/// A request for `/api/v1/...` or `/apis/<group>/<version>/...` below the version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceRequest {
    /// API group (`""` for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Namespace from the path, if any.
    pub namespace: Option<String>,
    /// Plural resource.
    pub resource: String,
    /// Object name, if any.
    pub name: Option<String>,
    /// Subresource such as `status`, if any.
    pub subresource: Option<String>,
    /// The verb.
    pub verb: Verb,
}

impl ResourceRequest {
    /// The parts, borrowed.
    pub fn as_ref(&self) -> ResourceRef<'_> {
        ResourceRef {
            group: &self.group,
            version: &self.version,
            namespace: self.namespace.as_deref(),
            resource: &self.resource,
            name: self.name.as_deref(),
            subresource: self.subresource.as_deref(),
            verb: self.verb,
        }
    }
}

/// Subresources of namespaces that could be mistaken for resources inside one.
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

/// A resource request's parts, borrowed from its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResourceRef<'a> {
    /// API group (`""` for core).
    pub group: &'a str,
    /// Version.
    pub version: &'a str,
    /// Namespace from the path, if any.
    pub namespace: Option<&'a str>,
    /// Plural resource.
    pub resource: &'a str,
    /// Object name, if any.
    pub name: Option<&'a str>,
    /// Subresource such as `status`, if any.
    pub subresource: Option<&'a str>,
    /// The verb.
    pub verb: Verb,
}

/// Parses the path of a resource request, or `None` when it is no resource path.
pub fn parse(method: &Method, path: &str, watch: bool) -> Option<ResourceRequest> {
    let r = parse_ref(method, path, watch)?;
    Some(ResourceRequest {
        group: r.group.to_owned(),
        version: r.version.to_owned(),
        namespace: r.namespace.map(str::to_owned),
        resource: r.resource.to_owned(),
        name: r.name.map(str::to_owned),
        subresource: r.subresource.map(str::to_owned),
        verb: r.verb,
    })
}

/// [`parse`] without copying the parts.
pub fn parse_ref<'a>(method: &Method, path: &'a str, watch: bool) -> Option<ResourceRef<'a>> {
    // The longest: apis/<group>/<version>/namespaces/<ns>/<resource>/<name>/<sub>.
    let mut parts: [&str; 8] = [""; 8];
    let mut count = 0;
    for part in path.trim_matches('/').split('/') {
        if count == parts.len() {
            return None;
        }
        parts[count] = part;
        count += 1;
    }
    let parts = &parts[..count];
    let (group, version, rest) = match parts {
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", _, sub] if NAMESPACE_SUBRESOURCES.contains(sub) => (None, rest),
        ["namespaces", ns, tail @ ..] if !tail.is_empty() => (Some(*ns), tail),
        _ => (None, rest),
    };
    let (resource, name, subresource) = match rest {
        [resource] => (*resource, None, None),
        [resource, name] => (*resource, Some(*name), None),
        [resource, name, sub] => (*resource, Some(*name), Some(*sub)),
        _ => return None,
    };
    if resource.is_empty()
        || name.is_some_and(str::is_empty)
        || subresource.is_some_and(str::is_empty)
    {
        return None;
    }
    let verb = verb(method, name.is_some(), subresource.is_some(), watch)?;
    Some(ResourceRef {
        group,
        version,
        namespace,
        resource,
        name,
        subresource,
        verb,
    })
}

fn verb(method: &Method, named: bool, subresource: bool, watch: bool) -> Option<Verb> {
    Some(match (method.as_str(), named) {
        // A create on an object's subresource (`pods/<name>/binding`).
        ("POST", true) if subresource => Verb::Create,
        ("GET" | "HEAD", true) => Verb::Get,
        ("GET" | "HEAD", false) if watch => Verb::Watch,
        ("GET" | "HEAD", false) => Verb::List,
        ("POST", false) => Verb::Create,
        ("PUT", true) => Verb::Update,
        ("PATCH", true) => Verb::Patch,
        ("DELETE", true) => Verb::Delete,
        ("DELETE", false) => Verb::DeleteCollection,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str) -> Option<ResourceRequest> {
        parse(&Method::GET, path, false)
    }

    #[test]
    fn core_and_group_paths() {
        let r = get("/api/v1/namespaces/default/configmaps/app").unwrap();
        assert_eq!(
            (
                r.group.as_str(),
                r.namespace.as_deref(),
                r.resource.as_str()
            ),
            ("", Some("default"), "configmaps")
        );
        assert_eq!((r.name.as_deref(), r.verb), (Some("app"), Verb::Get));
        let r = get("/apis/apps/v1/deployments").unwrap();
        assert_eq!(
            (r.group.as_str(), r.namespace, r.verb),
            ("apps", None, Verb::List)
        );
        let r = get("/apis/apps/v1/namespaces/x/deployments/d/status").unwrap();
        assert_eq!(r.subresource.as_deref(), Some("status"));
    }

    #[test]
    fn the_query_is_read_once_first_value_first() {
        let info = RequestInfo::parse(
            &Method::GET,
            "/api/v1/namespaces/a/pods",
            Some(
                "watch=1&limit=5&limit=7&labelSelector=app%3Dweb&continue=&timeout=3s&bogus=x&dryRun=All",
            ),
        );
        assert!(info.watch);
        let r = info.resource.as_ref().map(|r| r.verb);
        assert_eq!(r, Some(Verb::Watch));
        let q = &info.query;
        assert_eq!(q.limit.as_deref(), Some("5"));
        assert_eq!(q.label_selector.as_deref(), Some("app=web"));
        assert_eq!(q.continue_token.as_deref(), Some(""));
        assert_eq!(q.dry_run, vec!["All".to_owned()]);
        assert_eq!(
            info.timeout.as_ref().ok(),
            Some(&Some(Duration::from_secs(3)))
        );
        // dryRun is a list: every value counts, and each must be All.
        let dry = |query: &str| Query::parse(Some(query)).dry_run().map_err(|e| e.code());
        assert_eq!(dry("dryRun=All"), Ok(true));
        assert_eq!(dry("dryRun=All&dryRun=All"), Ok(true));
        assert_eq!(dry("dryRun="), Ok(false));
        assert_eq!(dry("dryRun=&dryRun=All"), Err(400));
        assert_eq!(dry("dryRun=All&dryRun=x"), Err(400));
        let info = RequestInfo::parse(&Method::GET, "/api/v1/pods", Some("watch=false"));
        assert!(!info.watch);
        assert_eq!(info.query.watch.as_deref(), Some("false"));
    }

    #[test]
    fn namespaces_themselves() {
        let r = get("/api/v1/namespaces/kube-system").unwrap();
        assert_eq!(
            (r.resource.as_str(), r.name.as_deref(), r.namespace),
            ("namespaces", Some("kube-system"), None)
        );
        let r = parse(&Method::PUT, "/api/v1/namespaces/x/status", false).unwrap();
        assert_eq!(
            (r.resource.as_str(), r.subresource.as_deref()),
            ("namespaces", Some("status"))
        );
        let r = get("/api/v1/namespaces/x/pods").unwrap();
        assert_eq!(
            (r.resource.as_str(), r.namespace.as_deref(), r.verb),
            ("pods", Some("x"), Verb::List)
        );
    }

    #[test]
    fn verbs_and_rejects() {
        assert_eq!(
            parse(&Method::GET, "/api/v1/pods", true).unwrap().verb,
            Verb::Watch
        );
        assert_eq!(
            parse(&Method::DELETE, "/api/v1/namespaces/a/pods", false)
                .unwrap()
                .verb,
            Verb::DeleteCollection
        );
        assert!(parse(&Method::POST, "/api/v1/namespaces/a/pods/x", false).is_none());
        assert!(get("/api/v1/namespaces/a/pods/x/status/extra").is_none());
        assert!(get("/api/v1").is_none());
        assert!(get("/apis/apps").is_none());
        assert!(get("/healthz").is_none());
    }
}
