//! Which FlowSchema a request matches, and its flow within the schema's
//! priority level (k8s.io/apiserver's flowcontrol match.go).

use serde::Deserialize;

use crate::user::UserInfo;

/// What a request is, as classification sees it.
#[derive(Clone, Debug)]
pub struct Descriptor<'a> {
    /// Who sends it.
    pub user: &'a UserInfo,
    /// A resource request, or the path of a non-resource one.
    pub target: Requested<'a>,
}

/// The resource or path a request is for.
#[derive(Clone, Copy, Debug)]
pub enum Requested<'a> {
    /// `/api/...` or `/apis/...` addressing a resource.
    Resource {
        /// The verb (`get`, `list`, `watch`, `create`...).
        verb: &'a str,
        /// API group (`""` for core).
        group: &'a str,
        /// Plural resource.
        resource: &'a str,
        /// Subresource, if any.
        subresource: Option<&'a str>,
        /// Namespace, if the path names one.
        namespace: Option<&'a str>,
    },
    /// Any other path.
    NonResource {
        /// The HTTP method in lower case.
        verb: &'a str,
        /// The path.
        path: &'a str,
    },
}

/// A FlowSchema's spec, the fields classification reads.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FlowSchemaSpec {
    /// The priority level's name.
    pub priority_level_configuration: NameRef,
    /// Lower matches first.
    #[serde(default)]
    pub matching_precedence: i32,
    /// How flows are told apart.
    #[serde(default)]
    pub distinguisher_method: Option<Distinguisher>,
    /// Any rule may match.
    #[serde(default)]
    pub rules: Vec<Rule>,
}

/// `{name: ...}`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct NameRef {
    /// The name.
    #[serde(default)]
    pub name: String,
}

/// `distinguisherMethod`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Distinguisher {
    /// `ByUser` or `ByNamespace`.
    #[serde(rename = "type", default)]
    pub kind: String,
}

/// One rule: who, and what.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// Any subject may match.
    #[serde(default)]
    pub subjects: Vec<Subject>,
    /// Resource requests it covers.
    #[serde(default)]
    pub resource_rules: Vec<ResourceRule>,
    /// Non-resource requests it covers.
    #[serde(default)]
    pub non_resource_rules: Vec<NonResourceRule>,
}

/// A subject: a user, a group or a service account.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount`.
    #[serde(default)]
    pub kind: String,
    /// For `User`.
    #[serde(default)]
    pub user: Option<NameRef>,
    /// For `Group`.
    #[serde(default)]
    pub group: Option<NameRef>,
    /// For `ServiceAccount`.
    #[serde(default)]
    pub service_account: Option<ServiceAccountRef>,
}

/// `{namespace, name}` of a service account (`*` for any name).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct ServiceAccountRef {
    /// Namespace.
    #[serde(default)]
    pub namespace: String,
    /// Name or `*`.
    #[serde(default)]
    pub name: String,
}

/// A rule over resource requests.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRule {
    /// Verbs or `*`.
    #[serde(default)]
    pub verbs: Vec<String>,
    /// Groups or `*`.
    #[serde(default)]
    pub api_groups: Vec<String>,
    /// `resource`, `resource/subresource` or `*`.
    #[serde(default)]
    pub resources: Vec<String>,
    /// Whether requests without a namespace match.
    #[serde(default)]
    pub cluster_scope: bool,
    /// Namespaces or `*`.
    #[serde(default)]
    pub namespaces: Vec<String>,
}

/// A rule over non-resource requests.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NonResourceRule {
    /// Verbs or `*`.
    #[serde(default)]
    pub verbs: Vec<String>,
    /// Paths, `prefix/*` or `*`.
    #[serde(default, rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
}

/// `["*"]`, or a list naming `value`.
fn has(list: &[String], value: &str) -> bool {
    matches!(list, [only] if only == "*") || list.iter().any(|v| v == value)
}

impl FlowSchemaSpec {
    /// Whether `request` matches one of the rules.
    pub fn matches(&self, request: &Descriptor<'_>) -> bool {
        self.rules.iter().any(|rule| rule.matches(request))
    }

    /// The flow `request` belongs to within the schema: its user's name,
    /// its namespace, or one flow for all.
    pub fn distinguisher<'a>(&self, request: &Descriptor<'a>) -> &'a str {
        match self.distinguisher_method.as_ref().map(|d| d.kind.as_str()) {
            Some("ByUser") => &request.user.name,
            Some("ByNamespace") => match request.target {
                Requested::Resource { namespace, .. } => namespace.unwrap_or_default(),
                Requested::NonResource { .. } => "",
            },
            _ => "",
        }
    }
}

impl Rule {
    fn matches(&self, request: &Descriptor<'_>) -> bool {
        if !self.subjects.iter().any(|s| s.matches(request.user)) {
            return false;
        }
        match request.target {
            Requested::Resource {
                verb,
                group,
                resource,
                subresource,
                namespace,
            } => self.resource_rules.iter().any(|rule| {
                has(&rule.verbs, verb)
                    && has(&rule.api_groups, group)
                    && rule.resources.iter().any(|r| {
                        r == "*"
                            || match subresource {
                                None => r == resource,
                                Some(sub) => r.split_once('/') == Some((resource, sub)),
                            }
                    })
                    && match namespace {
                        None => rule.cluster_scope,
                        Some(ns) => has(&rule.namespaces, ns),
                    }
            }),
            Requested::NonResource { verb, path } => self.non_resource_rules.iter().any(|rule| {
                has(&rule.verbs, verb)
                    && rule
                        .non_resource_urls
                        .iter()
                        .any(|pattern| url_matches(pattern, path))
            }),
        }
    }
}

/// `*`, the path itself, or a path below it (`/healthz` covers
/// `/healthz/etcd`; `/apis/*` covers `/apis/x` but not `/apis`), as
/// upstream's rule.
fn url_matches(pattern: &str, path: &str) -> bool {
    if pattern == "*" || pattern == path {
        return true;
    }
    let prefix = pattern.strip_suffix('*').unwrap_or(pattern);
    if prefix.ends_with('/') {
        path.starts_with(prefix)
    } else {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
    }
}

impl Subject {
    fn matches(&self, user: &UserInfo) -> bool {
        match self.kind.as_str() {
            "User" => self
                .user
                .as_ref()
                .is_some_and(|u| u.name == "*" || u.name == user.name),
            "Group" => self
                .group
                .as_ref()
                .is_some_and(|g| g.name == "*" || user.in_group(&g.name)),
            "ServiceAccount" => {
                let (Some(sa), Some((namespace, name))) =
                    (self.service_account.as_ref(), user.service_account())
                else {
                    return false;
                };
                sa.namespace == namespace && (sa.name == "*" || sa.name == name)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(value: serde_json::Value) -> FlowSchemaSpec {
        serde_json::from_value(value).unwrap()
    }

    fn resource<'a>(
        user: &'a UserInfo,
        verb: &'a str,
        resource: &'a str,
        namespace: Option<&'a str>,
    ) -> Descriptor<'a> {
        Descriptor {
            user,
            target: Requested::Resource {
                verb,
                group: "",
                resource,
                subresource: None,
                namespace,
            },
        }
    }

    #[test]
    fn subjects_resources_and_namespaces() {
        let fs = spec(json!({
            "priorityLevelConfiguration": {"name": "p"},
            "matchingPrecedence": 10,
            "distinguisherMethod": {"type": "ByNamespace"},
            "rules": [{
                "subjects": [{"kind": "ServiceAccount", "serviceAccount": {"namespace": "kube-system", "name": "*"}}],
                "resourceRules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "nodes/status"], "namespaces": ["*"]}]
            }]
        }));
        let sa = UserInfo::new("system:serviceaccount:kube-system:x", &[]);
        let other = UserInfo::new("system:serviceaccount:default:x", &[]);
        assert!(fs.matches(&resource(&sa, "list", "pods", Some("a"))));
        assert_eq!(
            fs.distinguisher(&resource(&sa, "list", "pods", Some("a"))),
            "a"
        );
        assert!(!fs.matches(&resource(&other, "list", "pods", Some("a"))));
        assert!(!fs.matches(&resource(&sa, "create", "pods", Some("a"))));
        // Cluster-scoped requests need clusterScope.
        assert!(!fs.matches(&resource(&sa, "list", "pods", None)));
        let status = Descriptor {
            user: &sa,
            target: Requested::Resource {
                verb: "get",
                group: "",
                resource: "nodes",
                subresource: Some("status"),
                namespace: Some("a"),
            },
        };
        assert!(fs.matches(&status));
    }

    #[test]
    fn non_resource_urls() {
        assert!(url_matches("*", "/healthz"));
        assert!(url_matches("/healthz", "/healthz"));
        assert!(url_matches("/healthz/*", "/healthz/etcd"));
        assert!(url_matches("/healthz", "/healthz/etcd"));
        assert!(!url_matches("/healthz", "/healthzx"));
        assert!(url_matches("/apis/*", "/apis/apps"));
        assert!(!url_matches("/apis/*", "/apis"));
        let fs = spec(json!({
            "priorityLevelConfiguration": {"name": "exempt"},
            "rules": [{
                "subjects": [{"kind": "Group", "group": {"name": "system:unauthenticated"}}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz"]}]
            }]
        }));
        let anonymous = UserInfo::anonymous();
        let probe = |verb, path| Descriptor {
            user: &anonymous,
            target: Requested::NonResource { verb, path },
        };
        assert!(fs.matches(&probe("get", "/readyz")));
        assert!(!fs.matches(&probe("post", "/readyz")));
        assert!(!fs.matches(&probe("get", "/metrics")));
        assert_eq!(fs.distinguisher(&probe("get", "/readyz")), "");
    }
}
