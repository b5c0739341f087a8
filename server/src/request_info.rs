//! What a request is about, read off its path and method the way
//! k8s.io/apiserver's RequestInfoFactory does.

use axum::http::Method;

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
